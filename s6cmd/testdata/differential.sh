#!/bin/sh
# The same s6 session against real s6-svscan and against hinit (SPEC §8):
#   differential.sh s6    WORKDIR            (s6's commands on PATH)
#   differential.sh hinit WORKDIR HINIT      (hsvc's s6 names first on PATH)
# prints one line per step: what ran, its exit code, and s6-svstat's answer
# with pids and seconds replaced, so that two transcripts compare equal.
set -u
mode=$1 work=$2
scan=$work/scan svc=$work/scan/x state=$work/state
mkdir -p "$scan" "$state"
echo sleep >"$state/mode"

norm() { sed -e 's/(pid [0-9]*)/(pid P)/' -e 's/[0-9][0-9]* seconds/N seconds/g'; }
step() { # step LABEL CMD...: run CMD, print LABEL and its exit code
	label=$1; shift
	"$@" >"$work/out" 2>"$work/err"; rc=$?
	echo "$label: rc=$rc $(norm <"$work/out" | tr '\n' ' ')"
}
step_err() { # step_err LABEL CMD...: step, with CMD's stderr too
	step "$@"
	echo "  stderr: $(sed "s#$work#WORK#g" <"$work/err" | tr '\n' ' ')"
}
stat() { step "svstat $1" s6-svstat "$svc"; }
until_stat() { # until_stat EXPECTED FIELDS: poll s6-svstat -o (at most 5 s)
	i=0
	while [ "$(s6-svstat -o "$2" "$svc" 2>/dev/null)" != "$1" ] && [ $i -lt 500 ]; do
		sleep 0.01; i=$((i + 1))
	done
	echo "until $2 = $1: $([ $i -lt 500 ] && echo reached || echo TIMEOUT)"
	s6-svwait -D -t 5000 "$svc" # and the finish script has ended
}

case $mode in
s6)
	s6-svscan "$scan" >"$work/supervisor.log" 2>&1 &
	sup=$!
	i=0; while [ ! -p "$scan/.s6-svscan/control" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
	;;
hinit)
	printf 'compat: s6-overlay\n' >"$work/hinit.yaml"
	HINIT_CONFIG=$work/hinit.yaml HINIT_RUNTIME_DIR=$work/rt HINIT_SCANDIR=$scan \
		"$3" sleep 1000 >"$work/supervisor.log" 2>&1 &
	sup=$!
	export HINIT_RUNTIME_DIR=$work/rt
	# until hinit answers: its socket answers "hinit is booting" (111
	# from s6-svscanctl) until the manager takes over
	i=0; while ! s6-svscanctl -a "$scan" 2>/dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
	;;
esac

# 1. register down: built under a dot name, renamed into place, rescan.
mkdir "$scan/.x"
cat >"$scan/.x/run" <<EOS
#!/bin/sh
case \$(cat $state/mode) in
exit78) exit 78 ;;
notify) echo >&3; exec sleep 1000 ;;
child) # a child in run's process group, as a gateway's tool servers are
	sh -c 'trap "echo >$state/child.usr1" USR1; trap "echo >$state/child.usr2" USR2; echo \$\$ >$state/child.pid; while :; do sleep 0.05; done' &
	trap '' USR1; exec sleep 1000 ;;
esac
exec sleep 1000
EOS
printf '#!/bin/sh\necho "$# $*" >%s/finish.args\n[ "$(cat %s/mode)" = slowfinish ] && sleep 1\n[ "$1" = 78 ] && exit 125\nexit 0\n' "$state" "$state" >"$scan/.x/finish"
chmod 755 "$scan/.x/run" "$scan/.x/finish"
echo 3 >"$scan/.x/notification-fd"
touch "$scan/.x/down"
mv "$scan/.x" "$svc"
step "svscanctl -a" s6-svscanctl -a "$scan"
i=0; while ! s6-svstat "$svc" >/dev/null 2>&1 && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
stat registered
step "svstat -o" s6-svstat -o up,wantedup,normallyup,ready,pid,exitcode,signal,signum "$svc"

# 2. -u, waiting until up: up, not ready (notification-fd, no newline).
step "svc -wu -u" s6-svc -wu -T 5000 -u "$svc"
stat up
step "svstat -u" s6-svstat -u "$svc"

# 3. kill -9 the process: restarted with another pid.
pid=$(s6-svstat -p "$svc")
kill -9 "$pid"
i=0; while [ "$(s6-svstat -p "$svc")" = "$pid" ] || [ "$(s6-svstat -p "$svc")" = -1 ]; do
	[ $i -lt 500 ] || break; sleep 0.01; i=$((i + 1))
done
echo "restarted after kill -9: $([ $i -lt 500 ] && echo yes || echo NO)"

# 4. -d, waiting until down.
step "svc -wD -d" s6-svc -wD -T 5000 -d "$svc"
stat "after -d"
step "svstat -o" s6-svstat -o up,wantedup,ready,pid,exitcode,signal,signum "$svc"

# 5. exit 78, finish exits 125: stays down.
echo exit78 >"$state/mode"
step "svc -u" s6-svc -u "$svc"
until_stat "false false" up,wantedup
stat "after exit 78"
step "svstat -e" s6-svstat -e "$svc"
echo "finish arguments after exit 78: $(cat "$state/finish.args")" # s6 2.11: code, signal, the dir's name

# 6. -O: the running process is not restarted when it ends.
echo sleep >"$state/mode"
step "svc -wu -u" s6-svc -wu -T 5000 -u "$svc"
step "svc -O" s6-svc -O "$svc"
# s6-svc returns before s6-supervise has read the FIFO: wait for the want.
i=0
while [ "$(s6-svstat -o up,wantedup "$svc")" != "true false" ] && [ $i -lt 500 ]; do
	sleep 0.01; i=$((i + 1))
done
stat "after -O"
kill -TERM "$(s6-svstat -p "$svc")"
until_stat "false" up
stat "after -O and TERM"

# 7. -wU with notification-fd: ready once the newline is written.
echo notify >"$state/mode"
step "svc -wU -u" s6-svc -wU -T 5000 -u "$svc"
stat ready
step "svstat -o ready" s6-svstat -o up,ready "$svc"
step "svwait -U" s6-svwait -U -t 2000 "$svc"
step "svwait -d (times out)" s6-svwait -d -t 200 "$svc"
step "svwait -o -u" s6-svwait -o -u -t 2000 "$svc" "$svc"

# 8. signals, and -r.
step "svc -h" s6-svc -h "$svc"
pid=$(s6-svstat -p "$svc")
step "svc -wR -r" s6-svc -wR -T 5000 -r "$svc"
echo "another pid after -r: $([ "$(s6-svstat -p "$svc")" != "$pid" ] && echo yes || echo NO)"

# 8b. a signal letter reaches run's process, not its process group. USR2
# to the child after s6-svc -1 has returned: by the time its trap has
# run, so has that of a USR1 sent before (lower signals first).
echo child >"$state/mode"
rm -f "$state"/child.*
step "svc -wr -r" s6-svc -wr -T 5000 -r "$svc"
i=0; while [ ! -s "$state/child.pid" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
step "svc -1" s6-svc -1 "$svc"
kill -USR2 "$(cat "$state/child.pid")"
i=0; while [ ! -e "$state/child.usr2" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
echo "the child got USR1 too: $([ -e "$state/child.usr1" ] && echo yes || echo no) ($([ -e "$state/child.usr2" ] && echo asked || echo TIMEOUT))"
kill "$(cat "$state/child.pid")"

# 8c. -d waits for the process to be gone, -D for its finish too (1 s here).
echo slowfinish >"$state/mode"
step "svc -d" s6-svc -d "$svc"
step "svwait -d (finish still running)" s6-svwait -d -t 500 "$svc"
step "svwait -D" s6-svwait -D -t 5000 "$svc"
echo sleep >"$state/mode"
step "svc -wu -u" s6-svc -wu -T 5000 -u "$svc"

# 9. refused to another user (when run as root).
if [ "$(id -u)" = 0 ]; then
	chmod 755 "$work"
	step "svc -d as nobody" su nobody -s /bin/sh -c "PATH=$PATH HINIT_RUNTIME_DIR=$work/rt s6-svc -d $svc"
fi

# 9b. a second service, y, down, without notification-fd: s6-svc waits
# for a state whatever happens (it times out on y down by choice), falls
# back from -wU to -wu with a warning, and takes a dir relative to its
# working dir (a finish script's s6-svc -d .).
y=$scan/y
mkdir "$scan/.y"
printf '#!/bin/sh\nexec sleep 1000\n' >"$scan/.y/run"
chmod 755 "$scan/.y/run"
touch "$scan/.y/down"
mv "$scan/.y" "$y"
s6-svscanctl -a "$scan"
i=0; while ! s6-svstat "$y" >/dev/null 2>&1 && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
step_err "svc -wu y down (times out)" s6-svc -wu -T 300 "$y"
step_err "svc -wU -u y, no notification-fd" s6-svc -wU -T 5000 -u "$y"
step "svstat . in y" sh -c 'cd "$1" && s6-svstat .' sh "$y"
step_err "svc -wD -d . in y" sh -c 'cd "$1" && s6-svc -wD -T 5000 -d .' sh "$y"
step "svstat -o up,wantedup y" s6-svstat -o up,wantedup "$y"

# 10. unregister as hermes does: -d, svwait -D, svscanctl -an, rm -rf.
step "svc -d" s6-svc -d "$svc"
step "svwait -D" s6-svwait -D -t 10000 "$svc"
step "svscanctl -an" s6-svscanctl -an "$scan"
sleep 0.2
rm -rf "$svc" && echo "rm -rf: ok"
i=0; while s6-svstat "$svc" >/dev/null 2>&1 && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
stat "after rm"
step "svc -u after rm" s6-svc -u "$svc"
step "svwait -D after rm" s6-svwait -D -t 100 "$svc"
step "usage" s6-svc
step "svstat usage" s6-svstat -d "$svc"

# 11. s6-svscanctl controls the scandir only, by any path to it: another
# dir, or a service dir, has no supervisor (s6: no .s6-svscan/control),
# and -q there shuts nothing down.
mkdir "$work/plain"
ln -s scan "$work/scanlink"
step "svscanctl -a via a symlink" s6-svscanctl -a "$work/scanlink"
step "svscanctl -a relative" sh -c 'cd "$1" && s6-svscanctl -a scan' sh "$work"
step "svscanctl -a plain dir" s6-svscanctl -a "$work/plain"
step "svscanctl -an service dir" s6-svscanctl -an "$y"
step "svscanctl -q plain dir" s6-svscanctl -q "$work/plain"
step "svscanctl -t service dir" s6-svscanctl -t "$y"
step "svstat -o up,wantedup y after" s6-svstat -o up,wantedup "$y"

kill -TERM "$sup"
wait "$sup" 2>/dev/null
exit 0
