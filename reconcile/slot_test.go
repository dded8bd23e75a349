package reconcile

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"hinit/s6dir"
)

// SlotStopTimeout is the one answer for the boot reconcile and a run-time
// register: hermes' stop budget for the profile's drains, its config.yaml
// over the environment; a config.yaml that is a symlink is never read, and
// the answer then comes from the environment alone, with an error saying so.
func TestSlotStopTimeout(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("agent:\n  restart_drain_timeout: 90\n  cron_drain_timeout: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, ConfigFile), filepath.Join(linked, ConfigFile)); err != nil {
		t.Fatal(err)
	}
	s := time.Second
	for _, tc := range []struct {
		dir         string
		env         map[string]string
		stop, drain time.Duration
		wantErr     bool
	}{
		{dir, nil, 120 * s, 90 * s, false},
		{t.TempDir(), map[string]string{EnvCronDrain: "45"}, 85 * s, 55 * s, false}, // a cron drain set: asked too
		{t.TempDir(), map[string]string{EnvCronDrain: "0"}, 60 * s, 0, false},
		{dir, map[string]string{EnvDrain: "5", EnvCronDrain: "100"}, 120 * s, 90 * s, false}, // config.yaml wins
		{t.TempDir(), map[string]string{EnvDrain: "5"}, 70 * s, 5 * s, false},
		{t.TempDir(), map[string]string{EnvCronDrain: "100"}, 140 * s, 110 * s, false},
		{t.TempDir(), nil, 70 * s, 0, false},
		{linked, nil, 70 * s, 0, true},
		{linked, map[string]string{EnvDrain: "50"}, 80 * s, 50 * s, true},
	} {
		stop, drain, err := SlotStopTimeout(tc.dir, tc.env)
		if stop != tc.stop || drain != tc.drain || (err != nil) != tc.wantErr {
			t.Errorf("SlotStopTimeout(%s, %v) = %v, %v, %v; want %v, %v, error %v", tc.dir, tc.env, stop, drain, err, tc.stop, tc.drain, tc.wantErr)
		}
	}
}

// An s6 dir hermes writes without timeout-kill gets hermes' default stop
// budget, the one rule's answer for hermes' default drains.
func TestS6DirKillTimeoutIsHermesBudget(t *testing.T) {
	if want := StopTimeout(0, DefaultCronDrain); s6dir.DefaultKillTimeout != want {
		t.Errorf("s6dir.DefaultKillTimeout = %v, want %v", s6dir.DefaultKillTimeout, want)
	}
}
