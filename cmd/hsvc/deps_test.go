package main

import (
	"slices"
	"testing"

	"hinit/internal/deptest"
)

// TestDeps keeps hinit.yaml's parser out of hsvc: gopkg.in/yaml.v3's
// package variables (regexps, tables) are built at every start of the
// process and linked even when no function of it is, 0.22 MB that put
// hsvc past its 3 MB goal (docs/benchmarks.md) when hsvc reached
// hinit/config through s6dir.
func TestDeps(t *testing.T) {
	deps := deptest.Deps(t, "hinit/s6cmd")
	for _, banned := range []string{"gopkg.in/yaml.v3", "regexp", "hinit/config"} {
		if slices.Contains(deps, banned) {
			t.Errorf("hsvc links package %s", banned)
		}
	}
}
