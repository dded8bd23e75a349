package docker

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDockerRestart: with a named volume on /opt/data, docker restart is
// invisible: the gateway that ran comes back, the stopped one stays down,
// the stale gateway.pid and processes.json of the old container are gone,
// and the boot log has one line per profile for the new boot.
func TestDockerRestart(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	c := start(t, []string{"-v", vol + ":/opt/data"}, "sleep", "infinity")
	c.booted()
	c.hermes("profile", "create", "alive")
	c.hermes("profile", "create", "sleeper")
	c.hermes("-p", "alive", "gateway", "start")
	c.hermes("-p", "sleeper", "gateway", "start")
	c.hermes("-p", "sleeper", "gateway", "stop")
	c.waitState("gateway-alive", "up", 20*time.Second, up)
	c.sh("hermes", `cd /opt/data/profiles && echo '{"pid":99999,"kind":"hermes-gateway"}' >sleeper/gateway.pid &&
		echo '[]' >sleeper/processes.json && echo '[]' >alive/processes.json`)

	restarted := time.Now()
	must(t, "restart", c.id)
	c.booted()
	alive := c.waitState("gateway-alive", "up", 30*time.Second, up)
	t.Logf("docker restart to gateway up again: %v", time.Since(restarted).Round(time.Millisecond))
	if s, ok := c.status("gateway-sleeper"); !ok || s.State != "down" || s.Want != "down" {
		t.Errorf("gateway-sleeper after restart: %+v (registered %v), want down", s, ok)
	}
	if s, ok := c.status("gateway-default"); !ok || s.State != "down" {
		t.Errorf("gateway-default after restart: %+v (registered %v), want down", s, ok)
	}
	for _, f := range []string{"sleeper/gateway.pid", "sleeper/processes.json"} {
		if c.exists("/opt/data/profiles/" + f) {
			t.Errorf("stale %s survived the restart", f)
		}
	}
	// alive's processes.json is the new gateway's own: its real child.
	waitFor(t, "the new gateway's processes.json", 10*time.Second, func() bool {
		return strings.Contains(c.readFile("/opt/data/profiles/alive/processes.json"), `"pid"`)
	})
	waitFor(t, "the new gateway's pid file", 10*time.Second, func() bool {
		return c.exists("/opt/data/profiles/alive/gateway.pid")
	})
	if pid := c.gatewayState("/opt/data/profiles/alive/gateway.pid")["pid"]; pid != float64(alive.PID) {
		t.Errorf("gateway.pid of alive holds %v, want the new gateway's %d", pid, alive.PID)
	}
	checkBootLog(t, c.readFile("/opt/data/logs/container-boot.log"))
}

// checkBootLog: the first boot knew only default; the second one lines for
// all three profiles, in the format of container_boot.py.
func checkBootLog(t *testing.T, log string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	re := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} (profile=\S+ prior_state=\S+ action=\S+) prior_exit=(clean|unclean|unknown)$`)
	var got []string
	for _, l := range lines {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("boot log line %q is not in the format of SPEC §5", l)
			continue
		}
		got = append(got, m[1])
	}
	if len(got) != 4 {
		t.Fatalf("boot log has %d lines, want 1 for the first boot and 3 for the second:\n%s", len(got), log)
	}
	second := slices.Sorted(slices.Values(got[1:]))
	want := []string{
		"profile=alive prior_state=running action=started",
		"profile=default prior_state=none action=registered",
		"profile=sleeper prior_state=stopped action=registered",
	}
	if got[0] != "profile=default prior_state=none action=registered" || !slices.Equal(second, want) {
		t.Errorf("boot log:\n%s\nwant first boot %q, second %q", log, "profile=default prior_state=none action=registered", want)
	}
}

// TestDockerStop: docker stop ends the container before docker's own
// SIGKILL deadline (status 143 from main's SIGTERM, not 137), every gateway
// stops by itself on SIGTERM with hermes' 1 for an unplanned stop, and each
// keeps "running" for the next boot (no planned-stop marker on a container
// shutdown).
func TestDockerStop(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	c := start(t, []string{"-v", vol + ":/opt/data", "-e", "HERMES_DASHBOARD=1"}, "sleep", "infinity")
	c.booted()
	profiles := []string{"one", "two"}
	for _, p := range profiles {
		c.hermes("profile", "create", p)
		c.hermes("-p", p, "gateway", "start")
		c.waitState("gateway-"+p, "up", 20*time.Second, up)
		waitFor(t, p+" running", 10*time.Second, func() bool {
			return c.gatewayState("/opt/data/profiles/" + p + "/gateway_state.json")["gateway_state"] == "running"
		})
	}
	c.waitState("dashboard", "up", 20*time.Second, up)

	stopping := time.Now()
	must(t, "stop", c.id)
	t.Logf("docker stop with 2 gateways and the dashboard: %v", time.Since(stopping).Round(time.Millisecond))
	if code := c.inspect("{{.State.ExitCode}}"); code != "143" {
		t.Errorf("exit status after docker stop %s, want 143 (main's SIGTERM; 137 means docker had to kill)", code)
	}
	logs := c.logs()
	for _, p := range profiles {
		state := decodeState(t, volumeFile(t, vol, "/opt/data/profiles/"+p+"/gateway_state.json"))
		checkState(t, p, state, map[string]string{"gateway_state": "running", "desired_state": "running", "exit_reason": "signal"})
		line := "gateway: SIGTERM without planned-stop marker: persisted running, exit 1"
		if !strings.Contains(logs, "[gateway-"+p+"] "+line) {
			t.Errorf("docker logs lack %q for %s", line, p)
		}
		if !strings.Contains(volumeFile(t, vol, "/opt/data/logs/gateways/"+p+"/current"), line) {
			t.Errorf("the log file of %s lacks its last line %q", p, line)
		}
		if !regexp.MustCompile(`hinit: exited svc=gateway-` + p + ` pid=\d+ code=1\b`).MatchString(logs) {
			t.Errorf("hinit did not see gateway-%s end by itself with 1 (hermes' unplanned SIGTERM)", p)
		}
	}
	if !strings.Contains(logs, "hinit: shutdown complete") {
		t.Errorf("hinit's last line missing from docker logs")
	}
}
