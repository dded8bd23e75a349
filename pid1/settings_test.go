package pid1

import (
	"os"
	"path/filepath"
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
