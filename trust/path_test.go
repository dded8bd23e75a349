package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// RootOnly on real dirs: a PATH dir only root can change, and each way
// someone else could put a program in it or choose what it names.
func TestRootOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give dirs to another user")
	}
	base := t.TempDir() // root's, 0700, in a sticky /tmp
	mk := func(rel string, mode uint32, uid int) string {
		p := filepath.Join(base, rel)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := unix.Chmod(p, mode); err != nil { // exactly mode, sticky bit included
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rootBin := mk("bin", 0o755, 0)
	userDir := mk("user", 0o755, 10000)
	userBin := mk("user/bin", 0o755, 0) // root's, in a dir the user may rename entries of
	groupBin := mk("group-bin", 0o775, 0)
	sticky := mk("sticky", 0o1777, 0)
	stickyRoot := mk("sticky/root", 0o755, 0)
	if err := os.Symlink(userDir, filepath.Join(base, "to-user")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rootBin, filepath.Join(base, "to-root")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rootBin, filepath.Join(userDir, "link")); err != nil { // in the user's dir, to root's dir
		t.Fatal(err)
	}
	// A plain dir of root's in the user's dir, holding a link to root's dir:
	// the user may swap the plain dir for one of theirs after the check.
	mk("user/plain", 0o755, 0)
	if err := os.Symlink(rootBin, filepath.Join(userDir, "plain", "bin")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir string
		ok  bool
		why string
	}{
		{rootBin, true, ""},
		{filepath.Join(base, "to-root"), true, ""},
		{stickyRoot, true, ""}, // in /tmp's way: others may not rename root's entry
		{userDir, false, "uid 10000"},
		{userBin, false, "uid 10000"},
		{filepath.Join(base, "to-user"), false, "uid 10000"},
		{filepath.Join(userDir, "link"), false, "uid 10000"},
		{groupBin, false, "writable by its group"},
		{sticky, false, "writable by every user"},
		{filepath.Join(base, "missing"), false, "no such file"},
		{filepath.Join(userDir, "plain", "bin"), false, "uid 10000"},
		{userDir + "/link/../bin", false, `has a ".." in it`},
		{rootBin + "/.", false, `has a "." in it`},
		{rootBin + "/", true, ""},
		{"/" + rootBin, true, ""},
		{"bin", false, "not an absolute path"},
		{"", false, "not an absolute path"},
	} {
		ok, why := RootOnly(tc.dir)
		if ok != tc.ok || (tc.why == "") != (why == nil) || why != nil && !strings.Contains(why.Error(), tc.why) {
			t.Errorf("RootOnly(%q) = %v, %v; want %v, saying %q", tc.dir, ok, why, tc.ok, tc.why)
		}
	}
}
