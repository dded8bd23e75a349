#!/bin/sh
# Round trips of the s6 commands, against hinit (hsvc's s6 names, and hsvc
# itself) and against real s6-svscan, for docs/s6-compat.md:
#   PATH=BIN:$PATH measure.sh hinit WORKDIR HINIT [RUNS]
#   measure.sh s6 WORKDIR [RUNS]
# BIN holds hinit, hsvc and hsvc's s6 names (s6-svc -> hsvc, ...). Prints
# the median, min and max in milliseconds of: s6-svc -wu -u (from down to
# running, the command returning once it is up), s6-svstat, and for hinit
# hsvc start --wait=5s and hsvc status.
set -u
mode=$1 work=$2
scan=$work/scan svc=$work/scan/x
mkdir -p "$scan"
if [ "$mode" = hinit ]; then
	runs=${4:-21}
	printf 'compat: s6-overlay\n' >"$work/hinit.yaml"
	HINIT_CONFIG=$work/hinit.yaml HINIT_RUNTIME_DIR=$work/rt HINIT_SCANDIR=$scan \
		"$3" sleep 1000 >"$work/supervisor.log" 2>&1 &
	export HINIT_RUNTIME_DIR=$work/rt
	while [ ! -S "$work/rt/control.sock" ]; do sleep 0.01; done
else
	runs=${3:-21}
	s6-svscan "$scan" >"$work/supervisor.log" 2>&1 &
fi
sup=$!
mkdir "$scan/.x"
printf '#!/bin/sh\nexec sleep 1000\n' >"$scan/.x/run"
chmod 755 "$scan/.x/run"
touch "$scan/.x/down"
mv "$scan/.x" "$svc"
s6-svscanctl -a "$scan"
while ! s6-svstat "$svc" >/dev/null 2>&1; do sleep 0.01; done

ms() { echo "$(( ($2 - $1) / 1000 ))"; } # ns to µs
stats() { # stats LABEL: median/min/max of the µs values on stdin, in ms
	sort -n | awk -v l="$1" '{v[NR]=$1} END {printf "%-28s median %.2f ms  min %.2f  max %.2f  (%d runs)\n", l, v[int((NR+1)/2)]/1000, v[1]/1000, v[NR]/1000, NR}'
}
i=0
while [ $i -lt "$runs" ]; do
	s6-svc -wD -d "$svc"
	a=$(date +%s%N); s6-svc -wu -u "$svc"; b=$(date +%s%N)
	ms "$a" "$b" >>"$work/up"
	a=$(date +%s%N); s6-svstat "$svc" >/dev/null; b=$(date +%s%N)
	ms "$a" "$b" >>"$work/stat"
	a=$(date +%s%N); date +%s%N >/dev/null; b=$(date +%s%N)
	ms "$a" "$b" >>"$work/date"
	if [ "$mode" = hinit ]; then
		hsvc stop --wait=5s x
		a=$(date +%s%N); hsvc start --wait=5s x; b=$(date +%s%N)
		ms "$a" "$b" >>"$work/hup"
		a=$(date +%s%N); hsvc status x >/dev/null; b=$(date +%s%N)
		ms "$a" "$b" >>"$work/hstat"
	fi
	i=$((i + 1))
done
stats "$mode s6-svc -wu -u" <"$work/up"
stats "$mode s6-svstat" <"$work/stat"
[ "$mode" = hinit ] && stats "hsvc start --wait" <"$work/hup" && stats "hsvc status" <"$work/hstat"
stats "(a bare fork+exec of date)" <"$work/date"
kill -TERM "$sup"
wait "$sup" 2>/dev/null
exit 0
