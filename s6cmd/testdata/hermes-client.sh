#!/bin/sh
# What hermes' S6ServiceManager (hermes_cli/service_manager.py) does to a
# profile gateway, step by step, with the same files, modes, commands and
# parsing, against hinit and a fake gateway:
#   hermes-client.sh WORKDIR HINIT        (hsvc's s6 names first on PATH)
# Every check prints "ok: ..." or "FAIL: ..."; the exit code is the number
# of failures.
set -u
work=$1 scan=$1/scan state=$1/state
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # check WHAT CMD...: CMD must succeed
	what=$1; shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}
waitfor() { # waitfor CMD...: poll CMD for up to 10 s (hermes' callers retry the same way)
	i=0
	while ! "$@" && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
	[ $i -lt 1000 ]
}
mkdir -p "$scan" "$state"
chmod 777 "$state"

printf 'compat: s6-overlay\n' >"$work/hinit.yaml"
HINIT_CONFIG=$work/hinit.yaml HINIT_RUNTIME_DIR=$work/rt HINIT_SCANDIR=$scan \
	"$2" sleep 1000 >"$work/supervisor.log" 2>&1 &
sup=$!
export HINIT_RUNTIME_DIR=$work/rt
waitfor test -S "$work/rt/control.sock" || fail "hinit did not open its socket"

# The fake gateway: exits 0 on SIGTERM when the planned-stop marker names
# its pid (an operator's stop), 1 otherwise (a crash-like end to restart).
cat >"$work/gateway" <<EOS
#!/bin/sh
echo \$\$ >$state/gw.pid
echo "gateway \$\$ started"
trap 'if [ "\$(cat $state/marker 2>/dev/null)" = "\$\$" ]; then echo planned >>$state/events; exit 0; fi; echo unplanned >>$state/events; exit 1' TERM
while :; do sleep 0.05; done
EOS
chmod 755 "$work/gateway"

svc=$scan/gateway-coder
is_running() { [ "$(s6-svstat -o up "$svc")" = true ]; }     # S6ServiceManager.is_running
supervised_pid() {                                           # S6ServiceManager._supervised_pid
	v=$(s6-svstat -o pid "$svc") || return 1
	[ "$v" -gt 0 ] 2>/dev/null && echo "$v"
}
gw_alive() { [ -f "$state/gw.pid" ] && kill -0 "$(cat "$state/gw.pid")" 2>/dev/null; }

# register_profile_gateway("coder", start_now=False)
tmp=$scan/.gateway-coder.tmp
mkdir "$tmp"
printf 'longrun\n' >"$tmp/type"
cat >"$tmp/run" <<EOS
#!/command/with-contenv sh
# shellcheck shell=sh
set -e
export HERMES_S6_SUPERVISED_CHILD=1
export HERMES_SUPERVISED_CHILD=1
[ "\$(id -u)" = 0 ] || exec $work/gateway
exec s6-setuidgid nobody $work/gateway
EOS
sed -i "1s|.*|#!/bin/sh|" "$tmp/run" # with-contenv is covered by the container tests
printf '#!/bin/sh\nif [ "$1" = "78" ]; then\n  exit 125\nfi\nif [ "$1" = "0" ]; then\n  exit 125\nfi\nexit 0\n' >"$tmp/finish"
mkdir "$tmp/log"
printf '#!/bin/sh\nexec s6-log 1 n10 s1000000 T %s\n' "$work/logs" >"$tmp/log/run"
chmod 755 "$tmp/run" "$tmp/finish" "$tmp/log/run"
for d in "$tmp" "$tmp/log"; do
	mkdir -m 3730 "$d/event"
	mkdir -m 755 "$d/supervise"
	mkdir -m 3730 "$d/supervise/event"
	mkfifo -m 660 "$d/supervise/control"
done
touch "$tmp/down"
mv "$tmp" "$svc"
check "s6-svscanctl -a exits 0" s6-svscanctl -a "$scan"
waitfor s6-svstat "$svc" >/dev/null 2>&1
check "registered down: is_running false" eval '! is_running'
check "registered down: no pid" eval '[ -z "$(supervised_pid)" ]'
check "registered down: no gateway started" eval '! gw_alive'

# start: s6-svc -u
check "start: s6-svc -u exits 0" s6-svc -u "$svc"
check "start: is_running becomes true" waitfor is_running
waitfor test -s "$state/gw.pid"
pid=$(supervised_pid)
check "_supervised_pid is the gateway's pid ($pid)" test "$pid" = "$(cat "$state/gw.pid")"

# stop: marker for the pid from s6-svstat, then s6-svc -d
echo "$pid" >"$state/marker"
check "stop: s6-svc -d exits 0" s6-svc -d "$svc"
check "stop: is_running becomes false" waitfor eval '! is_running'
check "stop: the gateway saw a planned stop" waitfor grep -qx planned "$state/events"
check "stop: the gateway is gone" eval '! gw_alive'

# restart (s6-svc -t) of a running gateway: a new pid, running. As under
# s6, a start sent while the finish script still runs is undone by its exit
# 125; hermes' next command comes much later, this script waits for it.
s6-svwait -D -t 10000 "$svc"
s6-svc -u "$svc"
waitfor is_running
old=$(supervised_pid)
check "restart: s6-svc -t exits 0" s6-svc -t "$svc"
check "restart: running again with another pid" waitfor eval '[ -n "$(supervised_pid)" ] && [ "$(supervised_pid)" != "$old" ]'
check "restart: that pid is the gateway's" waitfor eval '[ "$(supervised_pid)" = "$(cat "$state/gw.pid")" ]'

# unregister_profile_gateway
s6-svc -d "$svc"
check "unregister: s6-svwait -D -t 10000 exits 0" s6-svwait -D -t 10000 "$svc"
check "unregister: s6-svscanctl -an exits 0" s6-svscanctl -an "$scan"
sleep 0.2
check "unregister: rm -rf of the dir, supervise/ included, succeeds" rm -rf "$svc"
check "unregister: the dir is gone" test ! -e "$svc"
check "unregister: no gateway process left" eval '! gw_alive'
check "unregister: hinit forgot the service and its logger" waitfor eval '[ -z "$(hsvc list)" ]'
check "the logger wrote the gateway's log" test -f "$work/logs/current"

kill -TERM "$sup"
wait "$sup"
exit $fails
