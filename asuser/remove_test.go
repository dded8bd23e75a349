package asuser

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// RemoveAllAt removes a tree deeper than the descriptors left (os.RemoveAll
// failed with EMFILE there), wide levels, files, symlinks (never followed)
// and entries named as its own moved ones, and a name not there is no
// error.
func TestRemoveAllAt(t *testing.T) {
	base := t.TempDir()
	tree := filepath.Join(base, "tree")
	testprog.DeepChain(t, tree, 300)
	victim := filepath.Join(base, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mid := filepath.Join(tree, "d", "d", "d")
	testprog.FillDir(t, mid, 600)
	for _, n := range []string{".hinit-rm-1", ".hinit-rm-2"} {
		if err := os.MkdirAll(filepath.Join(tree, n, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(victim, filepath.Join(mid, "link")); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	restore := testprog.LimitDescriptors(t, 32)
	err = RemoveAllAt(d, "tree")
	restore()
	if err != nil {
		t.Fatalf("RemoveAllAt: %.300v", err)
	}
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Errorf("tree still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
		t.Errorf("a symlink in the tree was followed: %v", err)
	}
	if err := RemoveAllAt(d, "tree"); err != nil {
		t.Errorf("RemoveAllAt of a name not there: %v", err)
	}
}

// TestRemoveAllAtHasABudget: a tree that takes longer than the budget to
// remove is left, with errStillFilling. The dir's owner adding a level
// under the deepest one as fast as a pass lifts one (mkdirat and openat
// from a descriptor it holds) kept RemoveAllAt at work for ever, in a turn
// of Do, with root's requests queued behind it.
func TestRemoveAllAtHasABudget(t *testing.T) {
	base := t.TempDir()
	defer RemoveContents(base) // deep: os.RemoveAll needs a descriptor per level
	testprog.DeepChain(t, filepath.Join(base, "tree"), 2000)
	d, err := os.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	defer func(b time.Duration) { removeBudget = b }(removeBudget)
	removeBudget = time.Millisecond
	start := time.Now()
	err = RemoveAllAt(d, "tree")
	if !errors.Is(err, errStillFilling) {
		t.Fatalf("RemoveAllAt of 2,000 levels in 1ms: %v after %v, want %v", err, time.Since(start), errStillFilling)
	}
	if _, err := os.Lstat(filepath.Join(base, "tree")); err != nil {
		t.Fatalf("the tree should be left: %v", err)
	}
}
