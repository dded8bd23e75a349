package pid1

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hinit/config"
)

// The gateway check grace comes from reconcile.check_grace, and
// HINIT_GATEWAY_CHECK_GRACE overrides it; off (0) by default.
func TestCheckGraceSetting(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hinit.yaml")
	os.WriteFile(file, []byte("templates:\n  gateway: {command: [gw]}\nreconcile: {home: /opt/data, template: gateway, check_grace: 5m}\n"), 0o644)
	tests := []struct {
		file, env string
		want      time.Duration
		bad       bool
	}{
		{"", "", 0, false},
		{file, "", 5 * time.Minute, false},
		{file, "0", 0, false},
		{"", "90s", 90 * time.Second, false},
		{"", "soon", 0, true},
		{"", "-1s", 0, true},
	}
	for _, tc := range tests {
		env := map[string]string{"HINIT_CONFIG": tc.file, "HINIT_GATEWAY_CHECK_GRACE": tc.env}
		s, err := loadSettings(func(k string) string { return env[k] })
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.env)
			}
			continue
		}
		if err != nil || s.checkGrace != tc.want {
			t.Errorf("file %q env %q: checkGrace %v, %v; want %v", tc.file, tc.env, s, err, tc.want)
		}
	}
}

// The bare mode waits for a signalled main as long as it takes (waitMain)
// unless HINIT_SHUTDOWN_TIMEOUT asks for a deadline; any other mode has
// one.
func TestWaitMainSetting(t *testing.T) {
	if _, err := os.Stat(DefaultConfig); err == nil {
		t.Skipf("%s exists here: no bare mode", DefaultConfig)
	}
	file := filepath.Join(t.TempDir(), "hinit.yaml")
	if err := os.WriteFile(file, []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		env      map[string]string
		bare     bool
		waitMain bool
		timeout  time.Duration
	}{
		{map[string]string{}, true, true, DefaultShutdownTimeout},
		{map[string]string{"HINIT_SHUTDOWN_TIMEOUT": "20s"}, true, false, 20 * time.Second},
		{map[string]string{"HINIT_CONFIG": file}, false, false, DefaultShutdownTimeout},
		{map[string]string{"HINIT_SCANDIR": "/run/service"}, false, false, DefaultShutdownTimeout},
	}
	for _, tc := range tests {
		s, err := loadSettings(func(k string) string { return tc.env[k] })
		if err != nil || s.bare != tc.bare || s.waitMain != tc.waitMain || s.shutdownTimeout != tc.timeout {
			t.Errorf("%v: %+v, %v; want bare %v, waitMain %v, timeout %v", tc.env, s, err, tc.bare, tc.waitMain, tc.timeout)
		}
	}
	if s := (&settings{cfg: config.Default(), shutdownTimeout: time.Second}).nested(); s.waitMain || !s.bare {
		t.Errorf("nested: %+v; want bare with the image's deadline", s)
	}
}

// A start after the environment dir could not be read (hinit out of
// descriptors) gets the dir's last good reading, not hinit's own
// environment, which lacks what boot hooks and with-contenv writers put
// there.
func TestContainerEnvKeepsLastGoodReading(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "HOOK_SET"), []byte("yes"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	h := &hinit{envDir: dir, set: &settings{cfg: &config.Config{}}, log: slog.New(slog.NewTextHandler(&logged, nil))}
	if env := h.containerEnv(); env["HOOK_SET"] != "yes" {
		t.Fatalf("HOOK_SET=%q from the environment dir, want yes", env["HOOK_SET"])
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if env := h.containerEnv(); env["HOOK_SET"] != "yes" {
		t.Errorf("HOOK_SET=%q once the dir was unreadable, want the last good reading's yes", env["HOOK_SET"])
	}
	if !strings.Contains(logged.String(), "environment dir unreadable: using its last good reading") {
		t.Errorf("log %q does not say which environment was used", logged.String())
	}
}
