package docker

import (
	"strings"
	"testing"
	"time"
)

// TestBootHookRepairsOwnership: the first-boot hook (docker/hermes-setup.sh)
// seeds $HERMES_HOME as hermes, gives root-written files in the volume back
// to hermes at the next boot, and never follows a symlink planted in the
// volume.
func TestBootHookRepairsOwnership(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	c := start(t, []string{"-v", vol + ":/opt/data"}, "sleep", "infinity")
	c.booted()
	for _, d := range []string{"logs/gateways", "profiles", "skills", "platforms/pairing"} {
		if owner := strings.TrimSpace(c.sh("root", "stat -c %u:%g /opt/data/"+d)); owner != "10000:10000" {
			t.Errorf("seeded /opt/data/%s owned by %s, want 10000:10000", d, owner)
		}
	}
	c.sh("root", `mkdir -p /opt/data/profiles/rooty && echo soul >/opt/data/profiles/rooty/SOUL.md &&
		touch /opt/data/auth.json && rm -rf /opt/data/cron && ln -s /etc /opt/data/cron`)
	must(t, "restart", c.id)
	c.booted()
	for _, p := range []string{"/opt/data/profiles/rooty", "/opt/data/profiles/rooty/SOUL.md", "/opt/data/auth.json"} {
		if owner := strings.TrimSpace(c.sh("root", "stat -c %u:%g "+p)); owner != "10000:10000" {
			t.Errorf("%s owned by %s after the boot hook, want 10000:10000", p, owner)
		}
	}
	if owner := strings.TrimSpace(c.sh("root", "stat -c %u:%g /etc")); owner != "0:0" {
		t.Errorf("the hook followed the planted symlink: /etc is now %s", owner)
	}
	if l := c.logs(); !strings.Contains(l, "[hermes-setup] warning: refusing to go through symlink /opt/data/cron") {
		t.Errorf("no warning about the planted symlink in docker logs:\n%s", l)
	}
	if s, ok := c.status("gateway-rooty"); !ok || s.State != "down" {
		t.Errorf("gateway-rooty %+v (registered %v), want a down slot for the repaired profile", s, ok)
	}
}

// TestBootstrapState: HERMES_GATEWAY_BOOTSTRAP_STATE=running on a fresh
// volume starts the root gateway at first boot.
func TestBootstrapState(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"-e", "HERMES_GATEWAY_BOOTSTRAP_STATE=running"}, "sleep", "infinity")
	c.booted()
	c.waitState("gateway-default", "up", 20*time.Second, up)
	if log := c.readFile("/opt/data/logs/container-boot.log"); !strings.HasSuffix(log, " profile=default prior_state=running action=started\n") {
		t.Errorf("boot log %q", log)
	}
}
