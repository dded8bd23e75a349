package reconcile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// SlotStopTimeout is the one answer for the boot reconcile and a run-time
// register: the profile's drain plus 30 s, the environment first; a
// config.yaml that is a symlink is never read, and the answer then comes
// from the environment alone, with an error saying so.
func TestSlotStopTimeout(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("agent:\n  restart_drain_timeout: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, ConfigFile), filepath.Join(linked, ConfigFile)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir     string
		env     map[string]string
		want    time.Duration
		wantErr bool
	}{
		{dir, nil, 50 * time.Second, false},
		{dir, map[string]string{EnvDrain: "5"}, 35 * time.Second, false},
		{t.TempDir(), nil, 0, false},
		{linked, nil, 0, true},
		{linked, map[string]string{EnvDrain: "10"}, 40 * time.Second, true},
	} {
		got, err := SlotStopTimeout(tc.dir, tc.env)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("SlotStopTimeout(%s, %v) = %v, %v; want %v, error %v", tc.dir, tc.env, got, err, tc.want, tc.wantErr)
		}
	}
}
