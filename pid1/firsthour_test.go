package pid1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// A root hinit without some of the capabilities it uses (docker run
// --cap-drop) names them in one line, first, with the fix, before the
// errors they cause.
func TestMissingCapsNamed(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	p, code := runInit(t, initOpts{config: "user: \"10000:10000\"\nmain: {user: root}\n", dropCaps: "-chown,-kill",
		args: []string{"/bin/sh", "-c", "exit 0"}})
	if code != 0 {
		t.Errorf("exit %d, want main's 0", code)
	}
	want := "hinit: error: running as root without CAP_CHOWN, CAP_KILL: what needs them fails below; " +
		"add them back (--cap-add CHOWN --cap-add KILL) or run as a non-root user (--user 10000:10000)\n"
	errOut := p.stderr.String()
	if strings.Count(errOut, "without CAP_") != 1 || !strings.HasPrefix(errOut, want) {
		t.Errorf("stderr does not start with the one capability line %q:\n%s", want, errOut)
	}
}

// enabled: "on" starts a service (HERMES_DASHBOARD=on); a value that is
// neither true nor false leaves it down with one warning naming the value,
// instead of nothing.
func TestEnabledSpellings(t *testing.T) {
	cfg := "services:\n" +
		"  on: {command: [/bin/sh, -c, 'echo on-ran'], restart: never, enabled: \"${FLAG_ON}\"}\n" +
		"  odd: {command: [/bin/sh, -c, 'echo odd-ran'], restart: never, enabled: \"${FLAG_ODD}\"}\n" +
		"  off: {command: [/bin/sh, -c, 'echo off-ran'], restart: never, enabled: \"${FLAG_OFF}\"}\n"
	p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"},
		env: []string{"FLAG_ON=on", "FLAG_ODD=enable", "FLAG_OFF=off"}})
	p.waitOutput("[on] on-ran", false)
	p.waitOutput("main started", true)
	errOut, out := p.stderr.String(), p.stdout.String()
	want := `hinit: warning: enabled: "enable" is neither true (1, true, yes, on) nor false (0, false, no, off or empty): the service stays down svc=odd`
	if strings.Count(errOut, "is neither true") != 1 || !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks the one warning %q:\n%s", want, errOut)
	}
	if strings.Contains(out, "odd-ran") || strings.Contains(out, "off-ran") {
		t.Errorf("a disabled service ran:\n%s", out)
	}
}

// A scandir dir whose service.yaml is broken is listed by status, and also
// answers status NAME, says why on start NAME, and goes with unregister
// NAME, instead of "no such service".
func TestBrokenServiceAddressable(t *testing.T) {
	p := startInit(t, initOpts{args: []string{"sleep", "60"}})
	p.waitOutput("main started", true)
	publishDir(t, p, "broken", "command: [x]\nrestart: sometimes\n", 0, false)
	testprog.WaitFor(t, 10*time.Second, "broken service reported", func() bool {
		_, reason := p.statusOf("broken")
		return reason != ""
	})
	if code, out, errOut := p.hsvc(nil, "status", "broken"); code != 0 || !strings.Contains(out, "service.yaml:2: ") {
		t.Errorf("hsvc status broken: exit %d, %q %q; want 0 and the file:line", code, out, errOut)
	}
	code, _, errOut := p.hsvc(nil, "start", "broken")
	if want := "hsvc: broken: its scandir dir is not a service: "; code != 1 || !strings.HasPrefix(errOut, want) ||
		!strings.Contains(errOut, "service.yaml:2: ") || !strings.HasSuffix(errOut, "or remove it with hsvc unregister broken\n") {
		t.Errorf("hsvc start broken: exit %d, %q; want 1 and %q with the reason", code, errOut, want)
	}
	if code, _, errOut := p.hsvc(nil, "unregister", "broken"); code != 0 {
		t.Fatalf("hsvc unregister broken: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "service", "broken")); !os.IsNotExist(err) {
		t.Errorf("the broken dir is still there: %v", err)
	}
	testprog.WaitFor(t, 10*time.Second, "broken gone from status", func() bool {
		code, _, _ := p.hsvc(nil, "status", "broken")
		return code == 3
	})
}
