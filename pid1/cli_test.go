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

// check-config validates hinit.yaml with its hinit.d drop-ins: each file
// it read is named ok, and a service defined twice names both places.
func TestCheckConfigDropIns(t *testing.T) {
	dir := t.TempDir()
	main, dropIn := filepath.Join(dir, "hinit.yaml"), filepath.Join(dir, "hinit.d", "50-extra.yaml")
	os.Mkdir(filepath.Join(dir, "hinit.d"), 0o755)
	os.WriteFile(main, []byte("services:\n  web: {command: [sleep, '1']}\n"), 0o644)
	os.WriteFile(dropIn, []byte("services:\n  extra: {command: [sleep, '1']}\n"), 0o644)
	var out, errb bytes.Buffer
	if code := checkConfig([]string{main}, &out, &errb); code != 0 || out.String() != main+": ok\n"+dropIn+": ok\n" {
		t.Errorf("check-config = %d, %q, %q; want 0 and both files ok", code, out.String(), errb.String())
	}
	os.WriteFile(dropIn, []byte("services:\n  web: {command: [sleep, '2']}\n"), 0o644)
	out.Reset()
	want := dropIn + ":2: services.web: defined twice (first at " + main + ":2)\n"
	errb.Reset()
	if code := checkConfig([]string{main}, &out, &errb); code != 1 || errb.String() != want {
		t.Errorf("check-config = %d, %q; want 1, %q", code, errb.String(), want)
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
