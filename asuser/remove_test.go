package asuser

import (
	"os"
	"path/filepath"
	"testing"

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
