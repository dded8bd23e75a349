package pid1

import (
	"os"
	"strings"
	"testing"
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
