package pid1

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("services:\n  web: {command: [sleep, '1']}\n"), 0o644)
	os.WriteFile(bad, []byte("services:\n  web:\n    command: [sleep]\n    backoff: {initial: soon}\n"), 0o644)
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"good file", []string{good}, 0, good + ": ok\n", ""},
		{"bad duration with file and line", []string{bad}, 1, "", bad + ":4: "},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, 1, "", "no such file"},
		{"too many arguments", []string{good, bad}, 2, "", "usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := checkConfig(tt.args, &out, &errb)
			if code != tt.code || out.String() != tt.out || !strings.Contains(errb.String(), tt.err) {
				t.Errorf("check-config %v = %d, %q, %q; want %d, %q, containing %q",
					tt.args, code, out.String(), errb.String(), tt.code, tt.out, tt.err)
			}
		})
	}
}

func TestDropTiniFlags(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"-g", "--", "hermes", "-g"}, []string{"hermes", "-g"}},
		{[]string{"-s", "-g", "sleep", "1"}, []string{"sleep", "1"}},
		{[]string{"-p", "SIGKILL", "-e", "143", "--", "x"}, []string{"x"}},
		{[]string{"--"}, []string{}},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := dropTiniFlags(tt.in); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("dropTiniFlags(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
