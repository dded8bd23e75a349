package testprog

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// exposed is a copy of the test binary that any uid may execute, set by
// ExposeBinary; Command prefers it.
var exposed string

// ExposeBinary copies the test binary to a directory every user can enter,
// so that helper programs can run under another uid (go test keeps its
// binary in a root-only 0700 directory).
func ExposeBinary(t testing.TB) {
	t.Helper()
	if exposed != "" {
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := PublicDir(t)
	dst := filepath.Join(dir, filepath.Base(self))
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	exposed = dst
	t.Cleanup(func() { exposed = "" })
}

// PublicDir returns a new empty directory, mode 1777 as /run and /tmp are
// (every user may add entries, only an entry's owner and root may rename
// them), in a place every user can reach, removed at the end of the test.
func PublicDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hinit-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return dir
}
