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

// Resolve follows a path as the kernel does and lists the entries up to
// its last symlink, dirs included; none after it. Runs as any user.
func TestResolve(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b", "x/y/z", "x/w"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"a/b/l1": "../../x/w/l2", // relative, to a second link
		"x/w/l2": filepath.Join(base, "x", "y"),
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(ls []Link) []string {
		var out []string
		for _, l := range ls {
			if r, ok := strings.CutPrefix(l.Path, base+"/"); ok {
				out = append(out, r)
			}
		}
		return out
	}
	for _, c := range []struct{ path, resolved, chose string }{
		{"a/b/l1/z", "x/y/z", "a a/b a/b/l1 x x/w x/w/l2"},
		{"a/b/l1", "x/y", "a a/b a/b/l1 x x/w x/w/l2"},
		{"x/y/z", "x/y/z", ""},
		{"x/w/l2/z", "x/y/z", "x x/w x/w/l2"},
	} {
		got, chose, err := Resolve(filepath.Join(base, c.path))
		if err != nil {
			t.Fatalf("Resolve %s: %v", c.path, err)
		}
		if got != filepath.Join(base, c.resolved) || strings.Join(rel(chose), " ") != c.chose {
			t.Errorf("Resolve %s = %s, chose [%s]; want %s, [%s]", c.path, got, strings.Join(rel(chose), " "), c.resolved, c.chose)
		}
		if c.chose == "" && len(chose) != 0 { // base itself has no symlink in it
			t.Errorf("Resolve %s: chose %d entries of a path without a symlink", c.path, len(chose))
		}
	}
	if _, _, err := Resolve(filepath.Join(base, "a/missing/c")); err == nil {
		t.Error("Resolve of a missing path: no error")
	}
}
