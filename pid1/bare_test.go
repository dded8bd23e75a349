package pid1

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
)

// runUntouched runs f and fails when it made /run/hinit or /run/service
// (or changed them, when they exist).
func runUntouched(t *testing.T, f func()) {
	t.Helper()
	stamp := func() (s []string) {
		for _, d := range []string{control.DefaultRuntimeDir, DefaultScandir} {
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

// hsvc against a bare hinit says why there is no socket, with exit 5.
func TestHsvcAgainstBareHinit(t *testing.T) {
	p := startInit(t, initOpts{bare: true, as: "hinit", args: []string{"/bin/sh", "-c", "echo ready; exec sleep 100"}})
	p.waitOutput("ready", false)
	self := testprog.Command("x")[0]
	cmd := exec.Command(self, "hsvc", "status")
	cmd.Env = []string{"HINIT_TEST_AS_HSVC=1"}
	out, _ := cmd.CombinedOutput()
	want := "hsvc: hinit runs without a control socket: no hinit.yaml"
	if code := cmd.ProcessState.ExitCode(); code != control.CodeUnreachable || !strings.HasPrefix(string(out), want) {
		t.Errorf("hsvc status: exit %d, %q; want 5, %q", code, out, want)
	}
	p.signal(15)
	p.wait(10 * time.Second)
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
