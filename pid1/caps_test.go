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
