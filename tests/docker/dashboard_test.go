package docker

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDashboardOffByDefault: without HERMES_DASHBOARD the dashboard is
// registered down and no dashboard process runs.
func TestDashboardOffByDefault(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"-e", "HERMES_DASHBOARD=no"}, "sleep", "infinity")
	c.booted()
	s, ok := c.status("dashboard")
	if !ok || s.State != "down" || s.Want != "down" || s.PID != 0 {
		t.Errorf("dashboard %+v, want down, wanted down, no pid", s)
	}
	if ps := c.sh("root", "ps -o args"); strings.Contains(ps, "hermes dashboard") {
		t.Errorf("a dashboard runs:\n%s", ps)
	}
}

// TestDashboardRestartedAfterKill9: with HERMES_DASHBOARD=1 the dashboard
// is up, answers on 127.0.0.1:9119, and comes back after kill -9 with a
// new pid.
func TestDashboardRestartedAfterKill9(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"-e", "HERMES_DASHBOARD=1"}, "sleep", "infinity")
	c.booted()
	first := c.waitState("dashboard", "up", 30*time.Second, up)
	if page := c.sh("hermes", "wget -q -O- http://127.0.0.1:9119/"); !strings.HasPrefix(page, "fake hermes dashboard pid="+strconv.Itoa(first.PID)) {
		t.Errorf("dashboard page %q", page)
	}
	c.sh("hermes", "kill -9 "+strconv.Itoa(first.PID))
	killed := time.Now()
	again := c.waitState("dashboard", "up again with a new pid", 30*time.Second, func(s svc) bool {
		return up(s) && s.PID != first.PID
	})
	t.Logf("dashboard kill -9 to up again (ready on its port): %v", time.Since(killed).Round(time.Millisecond))
	if again.Restarts != 1 || again.LastExit == nil || again.LastExit.Signal != "KILL" || again.LastExit.Code != 137 {
		t.Errorf("after kill -9: %+v, want 1 restart and last exit KILL (137)", again)
	}
	c.sh("hermes", "wget -q -O- http://127.0.0.1:9119/")
}

// TestDashboardExit78NotRestarted: a dashboard that refuses its
// configuration (a non-loopback bind without auth) exits 78 and stays
// down: no restart loop (hermes#49567).
func TestDashboardExit78NotRestarted(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"-e", "HERMES_DASHBOARD=true", "-e", "HERMES_DASHBOARD_HOST=0.0.0.0"}, "sleep", "infinity")
	c.booted()
	s := c.waitState("dashboard", "exited", 30*time.Second, func(s svc) bool { return s.State == "exited" })
	if s.Restarts != 0 || s.LastExit == nil || s.LastExit.Code != 78 || s.PID != 0 {
		t.Errorf("dashboard %+v, want exited with 78, never restarted", s)
	}
}
