package main

import (
	"slices"
	"testing"

	"hinit/internal/deptest"
)

// TestDeps keeps two packages out of PID 1: net, which would add 0.3 MB of
// binary and memory that hinit never uses (docs/decisions.md, "No package
// net in hinit"), and os/exec, whose Cmd.Wait would race the reaper, the
// only caller of wait4 (every child starts through reaper.Start). Nor does
// the tests' FUSE helper (internal/hangfs, go-fuse) belong there.
func TestDeps(t *testing.T) {
	deps := deptest.Deps(t, "hinit/reaper")
	for _, banned := range []string{"net", "os/exec", "hinit/internal/hangfs", "github.com/hanwen/go-fuse/v2/fs"} {
		if slices.Contains(deps, banned) {
			t.Errorf("hinit links package %s", banned)
		}
	}
}
