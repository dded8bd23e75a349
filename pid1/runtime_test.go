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

// TestEmptyDirDeepTree: a scandir kept by a docker restart without a
// tmpfs holds whatever the hermes user left there, a chain of dirs deeper
// than PID 1's descriptor limit included (made in a second with mkdirat
// and openat, no path length to stop it). os.RemoveAll held a descriptor
// per level: the boot failed with EMFILE ("dynamic services are off"),
// every boot, while the tree stayed; and meanwhile PID 1 had no
// descriptor left for anything else. The limit is lowered here to the
// descriptors open plus 64, for a chain of 400 levels; under docker's
// 1,048,576 it takes as many levels.
func TestEmptyDirDeepTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "service")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	testprog.DeepChain(t, filepath.Join(dir, "deep"), 400)
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "deep", "d", "etc")); err != nil {
		t.Fatal(err)
	}
	restore := testprog.LimitDescriptors(t, 64)
	err := emptyDir(dir, 0o755, -1, -1, nil)
	restore()
	if err != nil {
		t.Fatalf("emptyDir: %.300v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("%d entries left, first %s", len(names), names[0].Name())
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("a symlink in the tree was followed: %v", err)
	}
}
