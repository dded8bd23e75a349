package control

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDialUnreachable(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"no socket", func(*testing.T, string) {}},
		{"stale socket", staleSocket},
		{"no runtime dir", nil},
		{"regular file", func(t *testing.T, path string) { writeFile(t, path, "") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), SocketName)
			if tc.setup == nil {
				path = filepath.Join(t.TempDir(), "gone", SocketName)
			} else {
				tc.setup(t, path)
			}
			_, err := Dial(path)
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("Dial: %v, want ErrUnreachable", err)
			}
		})
	}
}

func TestSocketPath(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := SocketPath(getenv); got != "/run/hinit/control.sock" {
		t.Errorf("default: %s", got)
	}
	env[RuntimeDirEnv] = "/tmp/x"
	if got := SocketPath(getenv); got != "/tmp/x/control.sock" {
		t.Errorf("HINIT_RUNTIME_DIR: %s", got)
	}
	_ = os.Getenv
}
