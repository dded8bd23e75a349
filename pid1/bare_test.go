package pid1

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"hinit/control"
	"hinit/internal/testprog"
)

// runUntouched runs f and fails when it made /run/hinit or /run/service
// (or changed them, when they exist).
func runUntouched(t *testing.T, f func()) {
	t.Helper()
	stamp := func() (s []string) {
		for _, d := range []string{control.DefaultRuntimeDir, control.DefaultScandir} {
			fi, err := os.Stat(d)
			if err != nil {
				s = append(s, d+" absent")
				continue
			}
			s = append(s, d+" "+fi.ModTime().String())
		}
		return s
	}
	before := stamp()
	f()
	if after := stamp(); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("/run touched: before %q, after %q", before, after)
	}
}

// The bare mode (SPEC §7): with no hinit.yaml and no HINIT_* asking for
// more, hinit as PID 1 runs main and nothing else, and says nothing. Before
// issue 12 it wrote /run/hinit/env, opened a control socket, watched
// /run/service and printed six lines.
func TestBareMode(t *testing.T) {
	runUntouched(t, func() {
		p, code := runInit(t, initOpts{bare: true, args: []string{"/bin/true"}})
		if code != 0 || p.stderr.String() != "" || p.stdout.String() != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0 and nothing", code, p.stdout, p.stderr)
		}
	})
}

// hsvc against a bare hinit says why there is no socket, with exit 5. It
// runs as main, in the container hinit is PID 1 of (a private /run, the
// namespace's /proc), as docker exec would.
func TestHsvcAgainstBareHinit(t *testing.T) {
	hsvc := append([]string{"/usr/bin/env", "HINIT_TEST_AS_HSVC=1"}, testprog.Command("x")[0], "hsvc", "status")
	p, code := runInit(t, initOpts{bare: true, as: "hinit", tmpfsRun: "mode=755", args: hsvc})
	want := "hsvc: hinit runs without a control socket: no hinit.yaml"
	if code != control.CodeUnreachable || !strings.HasPrefix(p.stderr.String(), want) {
		t.Errorf("hsvc status: exit %d, stderr %q; want 5, %q", code, p.stderr, want)
	}
}

// A mistyped option outside a container (issue 15 item 3) is one line and
// exit 2, before hinit touches anything: no subreaper, no /run.
func TestUnknownOptionTouchesNothing(t *testing.T) {
	self := testprog.Command("x")[0]
	for _, args := range [][]string{{"--bogus"}, {"-x", "sleep", "1"}, {"-e", "300", "--", "true"}} {
		runUntouched(t, func() {
			cmd := exec.Command(self, args...)
			cmd.Env = []string{"HINIT_TEST_AS_INIT=1", "PATH=" + os.Getenv("PATH")}
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 2 || strings.Count(string(out), "\n") != 1 || !strings.HasPrefix(string(out), "hinit: ") {
				t.Errorf("hinit %q: exit %d, %q; want 2 and one line", args, code, out)
			}
		})
	}
}

// tini's command-line exit codes (tini's run_outer_tests.py), as tini: -h
// 0, --version 0, a bad option 1 with one line, no program 1, a program
// that does not exist 127.
func TestTiniCommandLine(t *testing.T) {
	link := filepath.Join(t.TempDir(), "tini")
	if err := os.Symlink(testprog.Command("x")[0], link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"-h"}, 0, "Usage: tini [OPTIONS] PROGRAM -- [ARGS]"},
		{[]string{"--version"}, 0, "tini version 0.19.0 - hinit "},
		{[]string{"-z", "--", "true"}, 1, "tini: unknown option -z; tini -h lists the options\n"},
		{nil, 1, "tini: no program given"},
		{[]string{"-s", "--", "/no/such/program"}, 127, "hinit: error: main: "},
		{[]string{"-s", "-e", "127", "--", "/no/such/program"}, 0, ""},
		{[]string{"-s", "--", ""}, 127, "hinit: error: main: \"\": executable file not found in $PATH"}, // was 126: the first PATH dir
	}
	for _, tt := range tests {
		cmd := exec.Command(link, tt.args...)
		cmd.Env = []string{"HINIT_TEST_AS_INIT=1", "PATH=" + os.Getenv("PATH")}
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != tt.code || !strings.Contains(string(out), tt.out) {
			t.Errorf("tini %q: exit %d, %q; want %d, containing %q", tt.args, code, out, tt.code, tt.out)
		}
	}
}
