package pid1

import (
	"os"
	"path/filepath"
	"testing"

	"hinit/asuser"
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

// TestScandirReplacedByItsOwner: the scandir is the user's (uid 10000) in
// /run, which is mode 1777 in the image and kept by docker restart. The
// sticky bit lets an entry's owner rename it: the user moves the scandir
// away and leaves a symlink (or a file) at its path. The next boot must
// still get a scandir.
func TestScandirReplacedByItsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, kind := range []string{"symlink", "file"} {
		t.Run(kind, func(t *testing.T) {
			run, err := os.MkdirTemp("/tmp", "run-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(run)
			if err := os.Chmod(run, 0o1777); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(run, "service")
			if err := emptyDir(dir, 0o755, 10000, 10000, nil); err != nil { // first boot
				t.Fatal(err)
			}
			err = asuser.Do(asuser.ID{UID: 10000, GID: 10000}, func() error {
				if err := os.Rename(dir, filepath.Join(run, "old")); err != nil {
					return err
				}
				if kind == "symlink" {
					return os.Symlink("/etc", dir)
				}
				return os.WriteFile(dir, nil, 0o644)
			})
			if err != nil {
				t.Fatalf("as uid 10000: %v", err)
			}
			if err := emptyDir(dir, 0o755, 10000, 10000, nil); err != nil { // docker restart
				t.Fatalf("next boot: %v (prepareRuntime: dynamic services are off)", err)
			}
			if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
				t.Fatalf("scandir after the boot: %v %v", fi, err)
			}
			if _, err := os.Stat("/etc/passwd"); err != nil {
				t.Fatalf("/etc touched: %v", err)
			}
		})
	}
}
