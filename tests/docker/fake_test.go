package docker

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFakeGatewayIdentity: the fake gateway behaves as hermes' does towards
// another gateway and towards markers: a second `gateway run` without
// --replace is refused (exit 1) while the lock is held; a planned-stop
// marker older than 60 s is stale, removed by the 0.5 s watcher and stops
// nothing; a live one naming the gateway stops it (exit 0, "stopped")
// without any signal; --replace takes over from a running gateway, which
// exits 0 on the takeover marker.
func TestFakeGatewayIdentity(t *testing.T) {
	t.Parallel()
	c, s := runningGateway(t, "ident")
	dir := home + "/profiles/ident"
	waitFor(t, "gateway.pid", 10*time.Second, func() bool { return c.exists(dir + "/gateway.pid") })

	second := []string{"env", "HERMES_SUPERVISED_CHILD=1", "HERMES_S6_SUPERVISED_CHILD=1", "hermes", "-p", "ident", "gateway", "run"}
	if r := c.exec("hermes", second...); r.code != 1 || !strings.Contains(r.stderr, "already runs") {
		t.Errorf("a second gateway without --replace: exit %d %q, want 1", r.code, r.stderr)
	}

	pid := strconv.Itoa(s.PID)
	marker := dir + "/.gateway-planned-stop.json"
	stale := time.Now().UTC().Add(-2 * time.Minute).Format("2006-01-02T15:04:05.000000+00:00")
	c.sh("hermes", `echo '{"target_pid":`+pid+`,"target_start_time":null,"stopper_pid":1,"written_at":"`+stale+`"}' >`+marker)
	waitFor(t, "the watcher to remove the stale marker", 5*time.Second, func() bool { return !c.exists(marker) })
	if now, _ := c.status("gateway-ident"); !up(now) || now.PID != s.PID {
		t.Errorf("a stale marker stopped the gateway: %+v", now)
	}

	fresh := time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
	c.sh("hermes", `echo '{"target_pid":`+pid+`,"target_start_time":null,"stopper_pid":1,"written_at":"`+fresh+`"}' >`+marker)
	stopped := c.waitState("gateway-ident", "exited 0 on the watched marker", 5*time.Second, func(s svc) bool { return s.State == "exited" })
	if stopped.LastExit == nil || stopped.LastExit.Code != 0 {
		t.Errorf("after a live marker: %+v, want exited 0", stopped)
	}
	checkState(t, "after the watched marker", c.gatewayState(dir+"/gateway_state.json"), map[string]string{"gateway_state": "stopped"})

	c.hermes("-p", "ident", "gateway", "start")
	s = c.waitState("gateway-ident", "up again", 20*time.Second, func(n svc) bool { return up(n) && n.PID != s.PID })
	waitFor(t, "the new gateway.pid", 10*time.Second, func() bool { return c.pidFile(dir) == s.PID })
	must(t, "exec", "-d", "-u", "hermes", c.id, "env", "HERMES_SUPERVISED_CHILD=1", "HERMES_S6_SUPERVISED_CHILD=1", "hermes", "-p", "ident", "gateway", "run", "--replace")
	taken := c.waitState("gateway-ident", "replaced", 15*time.Second, func(s svc) bool { return s.State == "exited" })
	if taken.LastExit == nil || taken.LastExit.Code != 0 {
		t.Errorf("the replaced gateway: %+v, want exited 0 (takeover marker)", taken)
	}
	waitFor(t, "the replacer's gateway.pid", 10*time.Second, func() bool {
		p := c.pidFile(dir)
		return p != 0 && p != s.PID
	})
}

// pidFile is the pid in dir/gateway.pid, 0 while there is none.
func (c *ctr) pidFile(dir string) int {
	r := c.exec("root", "cat", dir+"/gateway.pid")
	if r.code != 0 {
		return 0
	}
	var rec struct{ PID int }
	json.Unmarshal([]byte(r.stdout), &rec)
	return rec.PID
}
