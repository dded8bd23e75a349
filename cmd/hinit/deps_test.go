package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDeps keeps two packages out of PID 1: net, which would add 0.3 MB of
// binary and memory that hinit never uses (docs/decisions.md, "No package
// net in hinit"), and os/exec, whose Cmd.Wait would race the reaper, the
// only caller of wait4 (every child starts through reaper.Start).
func TestDeps(t *testing.T) {
	goBin, err := exec.LookPath("go") // go test puts $GOROOT/bin first on PATH
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{"net", "os/exec"} {
		if slices.Contains(deps, banned) {
			t.Errorf("hinit links package %s", banned)
		}
	}
	if !slices.Contains(deps, "hinit/reaper") {
		t.Errorf("go list -deps does not list hinit/reaper: %q", deps)
	}
}
