package docker

import (
	"strings"
	"testing"
	"time"
)

// s6Volume is a script that leaves /opt/data as months under the s6-overlay
// image leave it: gateway_state.json as hermes' gateway/status.py writes it
// (desired_state and an integer updated_at from S6ServiceManager, or none
// at all from an older image), the previous container's gateway.pid,
// gateway.lock and processes.json, an s6-log dir (archives named by TAI64N
// label, a finished current of mode 0744, its lock and state) and a
// container-boot.log line of container_boot.py.
const s6Volume = `set -e
D=/opt/data
rec() { # DIR GATEWAY_STATE [DESIRED_STATE]
	extra=
	[ -z "${3:-}" ] || extra=",\"desired_state\":\"$3\""
	mkdir -p "$1"
	printf '{"pid":4242,"kind":"hermes-gateway","argv":["/opt/hermes/.venv/bin/python","-m","hermes_cli.main","gateway","run","--replace"],"start_time":123456,"hermes_home":"%s","gateway_state":"%s","exit_reason":"signal","restart_requested":false,"active_agents":0,"platforms":{"telegram":{"state":"connected","updated_at":"2026-11-20T10:00:00+00:00","writer_pid":4242}},"session_store":{"status":"ok"},"updated_at":1763632800,"code_sha":"abc123","code_version":"2026.9.1"%s}' "$1" "$2" "$extra" >"$1/gateway_state.json"
	printf '{"pid":4242,"kind":"hermes-gateway","argv":["hermes","gateway","run"],"start_time":123456,"hermes_home":"%s"}' "$1" >"$1/gateway.pid"
	cp "$1/gateway.pid" "$1/gateway.lock"
	echo '[{"pid":4300}]' >"$1/processes.json"
}
rec $D running running
for p in coder idle drainer broken; do mkdir -p $D/profiles/$p && echo soul >$D/profiles/$p/SOUL.md; done
rec $D/profiles/coder running running
rec $D/profiles/idle stopped stopped
rec $D/profiles/drainer draining
rec $D/profiles/broken startup_failed
rec $D/profiles/nosoul running running
printf 'OPENAI_API_KEY=sk-test\nAPI_SERVER_KEY=0123456789abcdef0123456789abcdef\n' >$D/.env
echo 'model: x' >$D/config.yaml
L=$D/logs/gateways/coder
mkdir -p $L
for i in 0 1 2; do echo "2026-11-1${i}T00:00:00.000000000  s6 archive $i" >$L/@400000006918000${i}00000000.s; done
echo '2026-11-20T10:00:00.000000000  s6 current' >$L/current
chmod 744 $L/current
: >$L/lock
: >$L/state
echo '2026-11-20T10:00:00+0000 profile=default prior_state=running action=started prior_exit=clean' >$D/logs/container-boot.log
mkdir -p $D/profiles/coder/state $D/profiles/idle/state
echo '{"phase":"running","pid":4242,"started_at":"2026-11-20T09:00:00+00:00"}' >$D/profiles/coder/state/gateway.lifecycle.json
echo '{"phase":"exited","pid":4243,"exit_code":0,"exit_reason":"graceful_shutdown"}' >$D/profiles/idle/state/gateway.lifecycle.json
chown -R 10000:10000 $D
chmod 600 $D/.env
chmod 640 $D/config.yaml`

// TestS6EraVolume: the volume the s6-overlay image leaves, under the same
// docker run: every gateway that ran comes back (draining counts as
// running, as container_boot reads it), stopped and failed ones stay down,
// a dir without SOUL.md gets no slot and keeps its files, the old
// container's pid files go, secrets keep their modes, the gateway's log
// goes on after s6-log's lines in its own dir, and docker stop is quick
// and leaves what a move back to the s6 image reads.
func TestS6EraVolume(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, s6Volume)
	idle := volumeFile(t, vol, "/opt/data/profiles/idle/gateway_state.json")
	c := start(t, []string{"-v", vol + ":/opt/data"}, "sleep", "infinity")
	c.booted()
	for _, g := range []string{"default", "coder", "drainer"} {
		c.waitState("gateway-"+g, "up", 30*time.Second, up)
	}
	for _, g := range []string{"idle", "broken"} {
		if s, ok := c.status("gateway-" + g); !ok || s.State != "down" || s.Want != "down" {
			t.Errorf("gateway-%s: %+v (registered %v), want down", g, s, ok)
		}
	}
	if s, ok := c.status("gateway-nosoul"); ok {
		t.Errorf("gateway-nosoul registered (%+v): a dir without SOUL.md is no profile", s)
	}
	for p, gone := range map[string]bool{"profiles/idle/gateway.pid": true, "profiles/idle/processes.json": true,
		"profiles/broken/gateway.pid": true, "profiles/nosoul/gateway.pid": false, "profiles/nosoul/processes.json": false} {
		if there := c.exists("/opt/data/" + p); there == gone {
			t.Errorf("%s: there after the boot %v, want %v", p, there, !gone)
		}
	}
	for p, want := range map[string]string{"/opt/data/.env": "10000:10000 600", "/opt/data/config.yaml": "10000:10000 640"} {
		if got := strings.TrimSpace(c.sh("root", "stat -c '%u:%g %a' "+p)); got != want {
			t.Errorf("%s is %q, want %q", p, got, want)
		}
	}
	log := c.readFile("/opt/data/logs/container-boot.log")
	// prior_exit as hermes' own container_boot says it, from its lifecycle
	// sentinel: coder's last life was killed, idle's exited cleanly.
	for _, want := range []string{"profile=default prior_state=running action=started prior_exit=clean\n",
		" profile=broken prior_state=startup_failed action=registered prior_exit=unknown\n",
		" profile=coder prior_state=running action=started prior_exit=unclean\n",
		" profile=default prior_state=running action=started prior_exit=unknown\n",
		" profile=drainer prior_state=running action=started prior_exit=unknown\n",
		" profile=idle prior_state=stopped action=registered prior_exit=clean\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("boot log lacks %q:\n%s", want, log)
		}
	}
	var logs []string
	waitFor(t, "the gateway's first line after s6-log's", 10*time.Second, func() bool {
		logs = strings.Split(c.sh("hermes", "hsvc logs -n 20 gateway-coder"), "\n")
		return len(logs) > 4 && strings.Contains(logs[4], "Hermes Gateway Starting")
	})
	for i, want := range []string{"s6 archive 0", "s6 archive 1", "s6 archive 2", "s6 current"} {
		if !strings.HasSuffix(logs[i], want) {
			t.Errorf("hsvc logs line %d: %q, want s6-log's %q", i, logs[i], want)
		}
	}

	stopping := time.Now()
	must(t, "stop", c.id)
	if took := time.Since(stopping); took > 5*time.Second {
		t.Errorf("docker stop took %v", took)
	}
	if code := c.inspect("{{.State.ExitCode}}"); code != "143" {
		t.Errorf("exit status %s, want main's 143", code)
	}
	// What the s6 image's container_boot reads at a move back.
	for _, p := range []string{"/opt/data/gateway_state.json", "/opt/data/profiles/coder/gateway_state.json", "/opt/data/profiles/drainer/gateway_state.json"} {
		checkState(t, p, decodeState(t, volumeFile(t, vol, p)), map[string]string{"gateway_state": "running", "code_sha": "abc123"})
	}
	if got := volumeFile(t, vol, "/opt/data/profiles/idle/gateway_state.json"); got != idle {
		t.Errorf("idle's gateway_state.json, never started, was rewritten:\n%s\nwas:\n%s", got, idle)
	}
}
