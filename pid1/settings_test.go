package pid1

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
