// Package deptest lists the packages a command links, for the tests that
// keep packages out of hinit and hsvc.
package deptest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Deps is `go list -deps .` run in the test's package dir: every package
// the command there links. want must be among them, or the listing is not
// what the test thinks it is.
func Deps(t *testing.T, want string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go") // go test puts $GOROOT/bin first on PATH
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list -deps: %v: %s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, want) {
		t.Fatalf("go list -deps does not list %s: %q", want, deps)
	}
	return deps
}
