package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDeps keeps hinit.yaml's parser out of hsvc: gopkg.in/yaml.v3's
// package variables (regexps, tables) are built at every start of the
// process and linked even when no function of it is, 0.22 MB that put
// hsvc past its 3 MB goal (docs/benchmarks.md) when hsvc reached
// hinit/config through s6dir.
func TestDeps(t *testing.T) {
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
	for _, banned := range []string{"gopkg.in/yaml.v3", "regexp", "hinit/config"} {
		if slices.Contains(deps, banned) {
			t.Errorf("hsvc links package %s", banned)
		}
	}
	if !slices.Contains(deps, "hinit/s6cmd") {
		t.Errorf("go list -deps does not list hinit/s6cmd: %q", deps)
	}
}
