package docker

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

const home = "/opt/data"

// TestProfileLifecycle is what a user does with docker exec -u hermes:
// profile create registers a down slot; gateway start, restart and stop
// drive it and record desired_state; the gateway logs to its file and to
// docker logs; profile delete stops it and removes slot and profile.
func TestProfileLifecycle(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "sleep", "infinity")
	c.booted()
	dir := home + "/profiles/coder"

	if out := c.hermes("profile", "create", "coder"); out != "✓ Created profile coder\n" {
		t.Errorf("profile create said %q", out)
	}
	if s, ok := c.status("gateway-coder"); !ok || s.State != "down" || s.Want != "down" {
		t.Errorf("after profile create: %+v (registered %v), want a down slot", s, ok)
	}
	if !c.exists(dir + "/SOUL.md") {
		t.Errorf("no %s/SOUL.md", dir)
	}

	if out := c.hermes("-p", "coder", "gateway", "start"); out != "✓ gateway-coder started\n" {
		t.Errorf("gateway start said %q", out)
	}
	first := c.waitState("gateway-coder", "up", 20*time.Second, up)
	waitFor(t, "gateway_state running", 10*time.Second, func() bool {
		return c.gatewayState(dir + "/gateway_state.json")["gateway_state"] == "running"
	})
	checkState(t, "after start", c.gatewayState(dir+"/gateway_state.json"),
		map[string]string{"gateway_state": "running", "desired_state": "running", "kind": "hermes-gateway"})
	checkGatewayLogs(t, c, "coder")

	if out := c.hermes("-p", "coder", "gateway", "restart"); out != "✓ gateway-coder restarted\n" {
		t.Errorf("gateway restart said %q", out)
	}
	second := c.waitState("gateway-coder", "up with a new pid", 20*time.Second, func(s svc) bool { return up(s) && s.PID != first.PID })
	if second.LastExit == nil || second.LastExit.Code != 0 {
		t.Errorf("restart: the old gateway did not stop on its planned-stop marker with 0: %+v", second)
	}

	if out := c.hermes("-p", "coder", "gateway", "stop"); out != "✓ gateway-coder stopped\n" {
		t.Errorf("gateway stop said %q", out)
	}
	s, _ := c.status("gateway-coder")
	if s.State != "down" || s.Want != "down" || s.LastExit == nil || s.LastExit.Code != 0 {
		t.Errorf("after gateway stop: %+v, want down after exit 0", s)
	}
	checkState(t, "after stop", c.gatewayState(dir+"/gateway_state.json"),
		map[string]string{"gateway_state": "stopped", "desired_state": "stopped", "exit_reason": "planned stop"})
	if c.exists(dir + "/.gateway-planned-stop.json") {
		t.Errorf("the planned-stop marker was not consumed")
	}

	c.hermes("-p", "coder", "gateway", "start")
	c.waitState("gateway-coder", "up", 20*time.Second, up)
	if out := c.hermes("profile", "delete", "coder", "--yes"); out != "✓ Deleted profile coder\n" {
		t.Errorf("profile delete said %q", out)
	}
	if _, ok := c.status("gateway-coder"); ok {
		t.Errorf("gateway-coder still registered after profile delete")
	}
	if c.exists(dir) || c.exists("/run/service/gateway-coder") {
		t.Errorf("profile dir or slot left after profile delete")
	}
	if ps := c.sh("root", "ps -o args"); strings.Contains(ps, "-p coder gateway run") {
		t.Errorf("the gateway still runs after profile delete:\n%s", ps)
	}
}

// checkGatewayLogs: the gateway's output is in its log file, each line
// timestamped, and in docker logs prefixed with the service name.
func checkGatewayLogs(t *testing.T, c *ctr, profile string) {
	t.Helper()
	line := "⚕ Hermes Gateway Starting (profile " + profile
	file := home + "/logs/gateways/" + profile + "/current"
	stamped := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S* ` + regexp.QuoteMeta(line))
	waitFor(t, "the gateway's line in "+file, 10*time.Second, func() bool {
		return c.exists(file) && stamped.MatchString(c.readFile(file))
	})
	waitFor(t, "the gateway's line in docker logs", 10*time.Second, func() bool {
		return strings.Contains(c.logs(), "[gateway-"+profile+"] "+line)
	})
}

// TestGatewayStopAll: hermes gateway stop --all stops every gateway in one
// request, each on its planned-stop marker, and none comes back.
func TestGatewayStopAll(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "sleep", "infinity")
	c.booted()
	for _, p := range []string{"alpha", "beta"} {
		c.hermes("profile", "create", p)
		c.hermes("-p", p, "gateway", "start")
		c.waitState("gateway-"+p, "up", 20*time.Second, up)
	}
	if out := c.hermes("gateway", "stop", "--all"); out != "✓ Stopped 3 profile gateway(s) under hinit\n" {
		t.Errorf("gateway stop --all said %q", out)
	}
	for _, p := range []string{"alpha", "beta"} {
		s, _ := c.status("gateway-" + p)
		if s.State != "down" || s.Want != "down" || s.LastExit == nil || s.LastExit.Code != 0 {
			t.Errorf("gateway-%s after stop --all: %+v, want down after exit 0", p, s)
		}
		checkState(t, p, c.gatewayState(home+"/profiles/"+p+"/gateway_state.json"),
			map[string]string{"gateway_state": "stopped", "desired_state": "stopped"})
	}
}

// TestBrokenProfileNotRestarted: a gateway that exits 78 (fatal
// configuration) is left exited, never restarted (hermes#51228), and
// `gateway start` (hsvc start --wait) says so instead of "started".
func TestBrokenProfileNotRestarted(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "sleep", "infinity")
	c.booted()
	c.hermes("profile", "create", "broken")
	c.sh("hermes", "touch "+home+"/profiles/broken/FAKE_BROKEN")
	if r := c.exec("hermes", "hermes", "-p", "broken", "gateway", "start"); r.code != 1 ||
		!strings.Contains(r.stderr, "gateway-broken is exited: exit 78") {
		t.Errorf("gateway start of a gateway exiting 78: exit %d %q%q, want 1 with the reason", r.code, r.stdout, r.stderr)
	}
	s := c.waitState("gateway-broken", "exited", 20*time.Second, func(s svc) bool { return s.State == "exited" })
	if s.Restarts != 0 || s.PID != 0 || s.LastExit == nil || s.LastExit.Code != 78 {
		t.Errorf("broken gateway %+v, want exited with 78 and no restart", s)
	}
	checkState(t, "broken", c.gatewayState(home+"/profiles/broken/gateway_state.json"),
		map[string]string{"gateway_state": "startup_failed", "desired_state": "running"})
}

// TestCrashLoopEndsFailed: a gateway that keeps crashing at startup backs
// off between restarts and, after the give_up limit of docker/hinit.yaml
// (5 restarts within a minute), ends failed with the reason; hsvc check
// stays healthy since a gateway is not essential.
func TestCrashLoopEndsFailed(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "sleep", "infinity")
	c.booted()
	c.hermes("profile", "create", "crashy")
	c.sh("hermes", "touch "+home+"/profiles/crashy/FAKE_CRASH")
	if r := c.exec("hermes", "hermes", "-p", "crashy", "gateway", "start"); r.code != 1 ||
		!strings.Contains(r.stderr, "gateway-crashy is backoff: exit 1") {
		t.Errorf("gateway start of a crashing gateway: exit %d %q%q, want 1 with the reason", r.code, r.stdout, r.stderr)
	}
	sawBackoff := false
	s := c.waitState("gateway-crashy", "failed", 60*time.Second, func(s svc) bool {
		sawBackoff = sawBackoff || s.State == "backoff"
		return s.State == "failed"
	})
	if !sawBackoff {
		t.Errorf("never saw state backoff between crashes")
	}
	if s.Restarts != 5 || s.PID != 0 || s.LastExit == nil || s.LastExit.Code != 1 ||
		!strings.Contains(s.Reason, "gave up after 5 restarts within 1m0s; last: exit 1") {
		t.Errorf("crash-looping gateway %+v, want failed after 5 restarts with the reason", s)
	}
	starts := strings.Count(c.readFile(home+"/logs/gateways/crashy/current"), "Hermes Gateway Starting")
	if starts != 6 {
		t.Errorf("%d starts in the gateway log, want 6 (the first and 5 restarts)", starts)
	}
	if r := c.exec("hermes", "hsvc", "check"); r.code != 0 {
		t.Errorf("hsvc check with a failed gateway: exit %d %s", r.code, r.stderr)
	}
}

// TestGatewayRunHandsOver: `docker run IMAGE gateway run` (the old way to
// run a gateway) hands the gateway to hinit: gateway-default comes up
// supervised, and main stays as its heartbeat.
func TestGatewayRunHandsOver(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "gateway", "run")
	c.booted()
	c.waitState("gateway-default", "up", 20*time.Second, up)
	waitFor(t, "the hand-over breadcrumb", 10*time.Second, func() bool {
		return strings.Contains(c.logs(), "gateway is now running under hinit supervision")
	})
	checkState(t, "default", c.gatewayState(home+"/gateway_state.json"),
		map[string]string{"gateway_state": "running", "desired_state": "running"})
	if c.inspect("{{.State.Running}}") != "true" {
		t.Errorf("container not running")
	}
}

// TestRestartWait: hsvc restart NAME --wait returns once the service is
// up again (it once failed at once on the "stopping" snapshot).
func TestRestartWait(t *testing.T) {
	t.Parallel()
	c, first := runningGateway(t, "rw")
	r := c.exec("hermes", "hsvc", "restart", "gateway-rw", "--wait")
	if r.code != 0 {
		t.Fatalf("hsvc restart --wait: exit %d %s", r.code, r.stderr)
	}
	if s, _ := c.status("gateway-rw"); !up(s) || s.PID == first.PID {
		t.Errorf("after hsvc restart --wait: %+v, want up with a new pid", s)
	}
}

// TestS6RestartIsNoCrash: today's hermes restarts a gateway with
// s6-svc -t (S6ServiceManager.restart); the gateway persists "running" and
// exits 1. Six such restarts within a minute leave it up, each at once:
// hinit took each exit for a crash, backed off, and after five within a
// minute (the template's give_up) left the gateway failed.
func TestS6RestartIsNoCrash(t *testing.T) {
	t.Parallel()
	c, s := runningGateway(t, "rs")
	for i := range 6 {
		waitFor(t, "the gateway's gateway.pid", 10*time.Second, func() bool { return c.pidFile(home+"/profiles/rs") == s.PID })
		c.sh("hermes", "s6-svc -t /run/service/gateway-rs")
		prev := s.PID
		s = c.waitState("gateway-rs", "up again", 20*time.Second, func(n svc) bool {
			return up(n) && n.PID != prev || n.State == "failed" || n.State == "backoff"
		})
		if !up(s) {
			t.Fatalf("after s6-svc -t number %d: %+v, want up again at once", i+1, s)
		}
	}
}
