package docker

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"hinit/gwstate"
)

// seed runs script as root on vol in a throwaway container that does not
// boot hinit: what a volume holds before the container under test starts.
func seed(t *testing.T, vol, script string) {
	t.Helper()
	must(t, "run", "--rm", "--pull", "never", "--network", "none", "--label", runLabel, "--name", name(t),
		"-v", vol+":/opt/data", "--entrypoint", "/bin/sh", image, "-c", "set -e; "+script+"; chown -R 10000:10000 /opt/data")
}

// seedProfile is a script line creating a profile whose gateway is wanted
// running.
func seedProfile(name string) string {
	d := "/opt/data/profiles/" + name
	return "mkdir -p " + d + " && echo soul >" + d + "/SOUL.md && echo '{\"desired_state\":\"running\"}' >" + d + "/gateway_state.json"
}

// TestDrainBudget: a profile that drains for 20 s (agent.restart_drain_timeout
// in its config.yaml) gets hermes' stop budget, 70 s (its default cron drain,
// 30 s + 10 s, is the longer, plus 30 s), and with HINIT_SHUTDOWN_TIMEOUT
// raised, docker stop -t 60 lets its busy gateway drain all 20 s, persist
// "running" and exit by itself (1), instead of being killed at
// HINIT_SHUTDOWN_TIMEOUT's default 8 s with its state left "draining".
func TestDrainBudget(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, seedProfile("drainer")+` && cd /opt/data/profiles/drainer &&
		printf 'agent:\n  restart_drain_timeout: 20\n' >config.yaml && echo 600 >FAKE_BUSY`)
	c := start(t, []string{"-v", vol + ":/opt/data", "-e", "HINIT_SHUTDOWN_TIMEOUT=55s"}, "sleep", "infinity")
	c.booted()
	c.waitState("gateway-drainer", "up", 30*time.Second, up)
	state := "/opt/data/profiles/drainer/gateway_state.json"
	waitFor(t, "drainer running", 10*time.Second, func() bool { return c.gatewayState(state)["gateway_state"] == "running" })
	if logs := c.logs(); !strings.Contains(logs, "profile=drainer stop_timeout=1m10s drain=20s") {
		t.Errorf("hinit did not give drainer a 1m10s stop timeout:\n%s", logs)
	}

	stopping := time.Now()
	must(t, "stop", "-t", "60", c.id)
	took := time.Since(stopping)
	t.Logf("docker stop -t 60 with a 20 s drain: %v", took.Round(time.Millisecond))
	if took < 20*time.Second || took > 50*time.Second {
		t.Errorf("docker stop took %v, want the 20 s drain and not much more", took)
	}
	checkState(t, "after the drain", decodeState(t, volumeFile(t, vol, state)),
		map[string]string{"gateway_state": "running", "desired_state": "running", "exit_reason": "signal"})
	logs := c.logs()
	for _, want := range []string{"[gateway-drainer] gateway: drain budget 20s spent: interrupting the agents",
		"[gateway-drainer] gateway: SIGTERM without planned-stop marker: persisted running, exit 1"} {
		if !strings.Contains(logs, want) {
			t.Errorf("docker logs lack %q", want)
		}
	}
	if code := c.inspect("{{.State.ExitCode}}"); code != "143" {
		t.Errorf("exit status %s, want 143 (137: docker had to kill)", code)
	}
}

// TestCheckFailingGateway: with HINIT_GATEWAY_CHECK_GRACE, hsvc check (the
// HEALTHCHECK) fails for a gateway wanted up that keeps crashing, and
// names it; without, the same crash loop leaves the check passing.
func TestCheckFailingGateway(t *testing.T) {
	t.Parallel()
	on := start(t, []string{"-e", "HINIT_GATEWAY_CHECK_GRACE=2s"}, "sleep", "infinity")
	off := start(t, nil, "sleep", "infinity")
	for _, c := range []*ctr{on, off} {
		c.booted()
		c.hermes("profile", "create", "crashy")
		c.sh("hermes", "touch "+home+"/profiles/crashy/FAKE_CRASH")
		c.exec("hermes", "hermes", "-p", "crashy", "gateway", "start") // fails: the gateway crashes
	}
	var last result
	waitFor(t, "hsvc check to fail naming gateway-crashy", 30*time.Second, func() bool {
		last = on.exec("hermes", "hsvc", "check")
		return last.code != 0
	})
	if !strings.Contains(last.stderr, "gateway-crashy") || !strings.Contains(last.stderr, "exit 1") {
		t.Errorf("hsvc check: exit %d, %q; want gateway-crashy and its exit 1 named", last.code, last.stderr)
	}
	off.waitState("gateway-crashy", "crash-looping for 3 s", 30*time.Second, func(s svc) bool { return s.Restarts >= 3 })
	if r := off.exec("hermes", "hsvc", "check"); r.code != 0 {
		t.Errorf("without a grace, hsvc check: exit %d %q; want 0 (off by default)", r.code, r.stderr)
	}
}

// TestMultiplex: with GATEWAY_MULTIPLEX_PROFILES the default gateway serves
// the named profiles: a named profile wanted running is registered down,
// and a named start without --force is refused with 78, by hermes' CLI and
// by the gateway itself.
func TestMultiplex(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, `echo '{"desired_state":"running"}' >/opt/data/gateway_state.json && `+seedProfile("coder"))
	c := start(t, []string{"-v", vol + ":/opt/data", "-e", "GATEWAY_MULTIPLEX_PROFILES=true"}, "sleep", "infinity")
	c.booted()
	c.waitState("gateway-default", "up", 30*time.Second, up)
	if s, ok := c.status("gateway-coder"); !ok || s.State != "down" || s.Want != "down" {
		t.Errorf("gateway-coder under multiplex: %+v (registered %v), want down", s, ok)
	}
	r := c.exec("hermes", "hermes", "-p", "coder", "gateway", "start")
	if r.code != 78 || !strings.Contains(r.stderr, "served by the default gateway") {
		t.Errorf("hermes -p coder gateway start: exit %d %q, want 78", r.code, r.stderr)
	}
	c.exec("hermes", "hsvc", "start", "gateway-coder", "--wait")
	s := c.waitState("gateway-coder", "exited", 20*time.Second, func(s svc) bool { return s.State == "exited" })
	if s.LastExit == nil || s.LastExit.Code != 78 {
		t.Errorf("the named gateway under multiplex: %+v, want exited 78", s)
	}
}

// TestMultiplexFold: with multiplex_profiles in the root config.yaml, a
// named profile that wanted running brings the default gateway up even
// though the root's own state says stopped (a container driven only as
// `hermes -p coder gateway start` came back with no gateway); a profile
// with gateway.standalone runs its own gateway beside it.
func TestMultiplexFold(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, `echo 'multiplex_profiles: true' >/opt/data/config.yaml && echo '{"desired_state":"stopped"}' >/opt/data/gateway_state.json && `+
		seedProfile("coder")+" && "+seedProfile("solo")+` && printf 'gateway:\n  standalone: true\n' >/opt/data/profiles/solo/config.yaml`)
	c := start(t, []string{"-v", vol + ":/opt/data"}, "sleep", "infinity")
	c.booted()
	c.waitState("gateway-default", "up", 30*time.Second, up)
	c.waitState("gateway-solo", "up", 30*time.Second, up)
	if s, ok := c.status("gateway-coder"); !ok || s.State != "down" || s.Want != "down" {
		t.Errorf("gateway-coder under multiplex: %+v (registered %v), want down", s, ok)
	}
	if l := c.logs(); !strings.Contains(l, "its running intent is the default gateway's profile=coder") {
		t.Errorf("no line of the fold in docker logs:\n%s", l)
	}
}

// TestDashboardContainer: a container whose command is the dashboard shares
// the volume of a gateway container: it registers and starts no gateway,
// whatever the profiles want.
func TestDashboardContainer(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, `echo '{"desired_state":"running"}' >/opt/data/gateway_state.json && `+seedProfile("coder"))
	c := start(t, []string{"-v", vol + ":/opt/data"}, "dashboard")
	c.booted()
	for _, g := range []string{"gateway-default", "gateway-coder"} {
		if s, ok := c.status(g); ok {
			t.Errorf("%s registered in a dashboard container: %+v", g, s)
		}
	}
	if !strings.Contains(c.logs(), "reconcile: skipped: the container's command is the dashboard") {
		t.Errorf("no reconcile line in docker logs:\n%s", c.logs())
	}
	if ps := c.sh("root", "ps -o args"); strings.Contains(ps, "gateway run") {
		t.Errorf("a gateway runs in the dashboard container:\n%s", ps)
	}
}

// TestDashboardContainerS6Entrypoint: a dashboard container whose
// entrypoint was kept from the s6 image, `/init
// /opt/hermes/docker/main-wrapper.sh dashboard` (/init is hinit now, as
// entrypoint-dispatch.sh runs it), is a dashboard container too: hermes'
// container_boot strips the wrapper before it looks. Before, hinit saw
// main-wrapper.sh as the command and started every gateway wanted running,
// a second one beside the gateway container's on the shared volume.
func TestDashboardContainerS6Entrypoint(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, `echo '{"desired_state":"running"}' >/opt/data/gateway_state.json && `+seedProfile("coder"))
	c := start(t, []string{"-v", vol + ":/opt/data", "--entrypoint", "/bin/sh"}, "-c", `set -e
		mkdir -p /opt/hermes/docker
		printf '#!/bin/sh\nexec hermes "$@"\n' >/opt/hermes/docker/main-wrapper.sh
		chmod 755 /opt/hermes/docker/main-wrapper.sh
		exec /init /opt/hermes/docker/main-wrapper.sh dashboard`)
	c.booted()
	if l := c.logs(); !strings.Contains(l, "reconcile: skipped: the container's command is the dashboard") {
		t.Errorf("no reconcile skip in docker logs:\n%s", l)
	}
	if list := c.exec("hermes", "hsvc", "list", "--prefix", "gateway-"); list.code != 0 || list.stdout != "" {
		t.Errorf("hsvc list --prefix gateway-: exit %d, %q; want no gateway in a dashboard container", list.code, list.stdout)
	}
}

// TestGracefulRestart: SIGUSR1 is the gateway's graceful restart; it exits
// 75 and hinit starts a new one at once, six times in a row, without a
// backoff and without the give_up limit (5 within a minute) ending it.
func TestGracefulRestart(t *testing.T) {
	t.Parallel()
	c, s := runningGateway(t, "r75")
	for i := 1; i <= 6; i++ {
		prev := s.PID
		if r := c.exec("hermes", "hsvc", "signal", "--process", "USR1", "gateway-r75"); r.code != 0 {
			t.Fatalf("hsvc signal USR1: exit %d %s", r.code, r.stderr)
		}
		s = c.waitState("gateway-r75", "up again after USR1 #"+strconv.Itoa(i), 10*time.Second,
			func(s svc) bool { return up(s) && s.PID != prev })
		if s.Restarts != i || s.LastExit == nil || s.LastExit.Code != 75 {
			t.Fatalf("after USR1 #%d: %+v, want %d restarts, last exit 75", i, s, i)
		}
	}
	if logs := c.logs(); strings.Contains(logs, "svc=gateway-r75 delay=") {
		t.Errorf("exit 75 went through a backoff:\n%s", logs)
	}
}

// TestDesiredStateInterleavings: 100 hsvc stop calls against a gateway that
// rewrites gateway_state.json read-modify-write every 2 ms (hermes'
// heartbeat, sped up, its window widened): the file may lose hinit's
// desired_state "stopped" to the gateway's rewrite, what the boot reads
// (gwstate.Resolve over the file and hinit's record) never does, and a
// docker restart keeps the gateway down and repairs the file.
func TestDesiredStateInterleavings(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	c := start(t, []string{"-v", vol + ":/opt/data", "-e", "FAKE_HEARTBEAT=2ms", "-e", "FAKE_STATE_WRITE_DELAY=3ms"},
		"sleep", "infinity")
	c.booted()
	c.hermes("profile", "create", "race")
	dir := home + "/profiles/race"
	// start without --wait: the grep waits for the gateway's own running
	// record, and --wait's 2 s settle would add 200 s to the 100 rounds.
	// Ten rounds a docker exec: a round is 70 ms on a quiet machine, but
	// each start and stop fsyncs the state file and hinit's record (file
	// and dir), and under CI's disk load a round took 2 s: 50 rounds
	// outlasted docker exec's 90 s.
	script := `for i in $(seq 10); do
		hsvc start gateway-race >/dev/null || exit 1
		until grep -q '"gateway_state":"running"' ` + dir + `/gateway_state.json; do sleep 0.005; done
		sleep 0.01
		hsvc stop gateway-race --wait >/dev/null || exit 2
		printf '%s\t%s\n' "$(cat ` + dir + `/gateway_state.json)" "$(cat ` + dir + `/` + gwstate.RecordName + ` 2>/dev/null)"
	done`
	reverted, lost, n := 0, 0, 0
	for batch := 0; batch < 10; batch++ {
		for _, line := range strings.Split(strings.TrimSpace(c.sh("hermes", script)), "\n") {
			state, rec, _ := strings.Cut(line, "\t")
			n++
			in, err := gwstate.Resolve([]byte(state), []byte(rec))
			if err != nil || in.State != gwstate.Stopped {
				if lost++; lost <= 3 {
					t.Errorf("stop %d: the boot would read %+v, %v from %s / %s", n, in, err, state, rec)
				}
			}
			if in.Reverted {
				reverted++
			}
		}
	}
	if lost > 0 {
		t.Errorf("desired_state lost in %d of %d stops", lost, n)
	}
	t.Logf("%d stops; the gateway's rewrite reverted desired_state in %d of them", n, reverted)
	if n != 100 {
		t.Errorf("%d stops, want 100", n)
	}
	must(t, "restart", c.id)
	c.booted()
	if s, ok := c.status("gateway-race"); !ok || s.State != "down" {
		t.Errorf("gateway-race after docker restart: %+v (registered %v), want down", s, ok)
	}
	checkState(t, "after the restart", c.gatewayState(dir+"/gateway_state.json"), map[string]string{"desired_state": "stopped"})
}
