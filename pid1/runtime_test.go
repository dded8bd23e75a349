package pid1

import (
	"os"
	"path/filepath"
	"testing"

	"hinit/internal/testprog"
)

// TestEmptyDirHoldsNoListing: the scandir is emptied at boot, and after a
// docker restart without a tmpfs it holds whatever the hermes user left:
// emptying 50,000 entries of 246-byte names holds a batch of names, not the
// listing (os.ReadDir of it: about 25 MiB).
func TestEmptyDirHoldsNoListing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "service")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	testprog.FillDir(t, dir, 50000)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "sub", "etc")); err != nil {
		t.Fatal(err)
	}
	var err error
	grew := testprog.HeapGrowth(func() { err = emptyDir(dir, 0o755, -1, -1, nil) })
	if err != nil {
		t.Fatalf("emptyDir: %v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("%d entries left, first %s", len(names), names[0].Name())
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("a symlink in the dir was followed: %v", err)
	}
	if grew > 8<<20 {
		t.Fatalf("emptying the dir grew the heap by %.1f MiB, want at most 8", float64(grew)/(1<<20))
	}
}
