package asuser

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// owner is path's uid:gid, the path itself (a symlink's own).
func owner(t *testing.T, path string) [2]int {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return [2]int{int(st.Uid), int(st.Gid)}
}

func notOwnedBy(uid, gid int) func(st *unix.Stat_t) bool {
	return func(st *unix.Stat_t) bool { return int(st.Uid) != uid || int(st.Gid) != gid }
}

// ChownTree changes dirs, files, a FIFO (without opening it for reading)
// and a symlink itself, never what the symlink points to, leaves a file
// with other hard links alone and says so, and keeps what Change leaves.
func TestChownTree(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	top := filepath.Join(base, "top")
	victim := filepath.Join(base, "victim")
	for _, d := range []string{top, filepath.Join(top, "a", "b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{victim, filepath.Join(top, "a", "b", "f"), filepath.Join(top, "h1"), filepath.Join(top, "mine")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Link(filepath.Join(top, "h1"), filepath.Join(top, "a", "h2")))
	must(os.Symlink(victim, filepath.Join(top, "a", "link")))
	must(unix.Mkfifo(filepath.Join(top, "fifo"), 0o644))
	must(os.Chown(filepath.Join(top, "mine"), 10000, 10000))
	var refused []string
	// a trailing slash, as HERMES_HOME may have
	err := ChownTree(top+"/", Tree{UID: 10000, GID: 10000, Change: notOwnedBy(10000, 10000),
		Refused: func(p string) { refused = append(refused, p) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "a", "a/b", "a/b/f", "a/link", "fifo", "mine"} {
		if got := owner(t, filepath.Join(top, p)); got != [2]int{10000, 10000} {
			t.Errorf("%s: owner %v, want 10000:10000", p, got)
		}
	}
	for _, p := range []string{victim, filepath.Join(top, "h1")} {
		if got := owner(t, p); got != [2]int{0, 0} {
			t.Errorf("%s: owner %v, want 0:0", p, got)
		}
	}
	slices.Sort(refused)
	if want := []string{top + "/a/h2", top + "/h1"}; !slices.Equal(refused, want) {
		t.Errorf("refused %v, want %v", refused, want)
	}
}

// The tree's owner swaps a dir for a symlink to root's dir while the walk
// is in it (here: as Change looks at the dir): the walk goes on in the dir
// it opened. A path walk (find -exec chown -h top/a/f) chowned the file of
// the same name in root's dir.
func TestChownTreeSwappedDir(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	top := filepath.Join(base, "top")
	rootDir := filepath.Join(base, "etc")
	for _, d := range []string{filepath.Join(top, "a"), rootDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(top, "a", "f"), filepath.Join(rootDir, "f")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var a unix.Stat_t
	if err := unix.Stat(filepath.Join(top, "a"), &a); err != nil {
		t.Fatal(err)
	}
	swapped := false
	change := func(st *unix.Stat_t) bool {
		if st.Ino == a.Ino && !swapped {
			swapped = true
			if err := os.Rename(filepath.Join(top, "a"), filepath.Join(top, "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(rootDir, filepath.Join(top, "a")); err != nil {
				t.Fatal(err)
			}
		}
		return st.Uid != 10000
	}
	if err := ChownTree(top, Tree{UID: 10000, GID: 10000, Change: change}); err != nil {
		t.Fatal(err)
	}
	if !swapped {
		t.Fatal("the dir was never looked at")
	}
	if got := owner(t, filepath.Join(rootDir, "f")); got != [2]int{0, 0} {
		t.Errorf("root's file through the swapped dir: owner %v, want 0:0", got)
	}
	if got := owner(t, filepath.Join(top, "old", "f")); got != [2]int{10000, 10000} {
		t.Errorf("the file of the dir walked: owner %v, want 10000:10000", got)
	}
}

// With SameDev, a filesystem mounted inside the tree keeps its owners.
func TestChownTreeSameDev(t *testing.T) {
	requireRoot(t)
	top := t.TempDir()
	mnt := filepath.Join(top, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "mode=0755"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(mnt, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "g"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ChownTree(top, Tree{UID: 10000, GID: -1, SameDev: true, Change: notOwnedBy(10000, 0)}); err != nil {
		t.Fatal(err)
	}
	if got := owner(t, filepath.Join(top, "g")); got != [2]int{10000, 0} {
		t.Errorf("g: owner %v, want 10000:0 (the owner only)", got)
	}
	for _, p := range []string{mnt, filepath.Join(mnt, "f")} {
		if got := owner(t, p); got != [2]int{0, 0} {
			t.Errorf("%s, on another filesystem: owner %v, want 0:0", p, got)
		}
	}
}

// A mount inside the tree keeps its owners, and what is under it, without
// SameDev too: a host dir bind-mounted from the tree's own filesystem (a
// docker volume and a host dir on one disk share st_dev), which the
// tree's owner may have moved into the tree inside a dir of its own, and a
// file bind-mounted at a name of the tree.
func TestChownTreeLeavesMounts(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	top, host, hostFile := filepath.Join(base, "top"), filepath.Join(base, "host"), filepath.Join(base, "hostfile")
	for _, d := range []string{filepath.Join(top, "moved", "mnt"), host} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(host, "secret"), hostFile, filepath.Join(top, "filemnt"), filepath.Join(top, "moved", "g")} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range [][2]string{{host, filepath.Join(top, "moved", "mnt")}, {hostFile, filepath.Join(top, "filemnt")}} {
		if err := unix.Mount(m[0], m[1], "", unix.MS_BIND, ""); err != nil {
			t.Skipf("cannot bind-mount here: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(m[1], unix.MNT_DETACH) })
	}
	var a, b unix.Stat_t
	if unix.Stat(top, &a) != nil || unix.Stat(filepath.Join(top, "moved", "mnt"), &b) != nil || a.Dev != b.Dev {
		t.Fatalf("the bind mount is on another st_dev (%d, %d): the case is not made", a.Dev, b.Dev)
	}
	// The kernels without statx's mount ID (before 5.8) are told it by
	// /proc/self/fdinfo: both say the same here.
	for _, p := range []string{top, filepath.Join(top, "moved", "mnt"), filepath.Join(top, "filemnt")} {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		a, errA := mountID(fd)
		b, errB := fdinfoMountID(fd)
		unix.Close(fd)
		if errA != nil || errB != nil || a != b {
			t.Errorf("%s: statx says mount %d (%v), fdinfo %d (%v)", p, a, errA, b, errB)
		}
	}
	if err := ChownTree(top, Tree{UID: 10000, GID: 10000, Change: notOwnedBy(10000, 10000)}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string][2]int{
		top: {10000, 10000}, filepath.Join(top, "moved"): {10000, 10000}, filepath.Join(top, "moved", "g"): {10000, 10000},
		host: {0, 0}, filepath.Join(host, "secret"): {0, 0}, hostFile: {0, 0},
	} {
		if got := owner(t, p); got != want {
			t.Errorf("%s: owner %v, want %v", p, got, want)
		}
	}
}

// With Linked, a file with other hard links is changed as Change says
// (-from-uid: every link is the old UID's, one inode), and Refused is not
// told of it.
func TestChownTreeLinked(t *testing.T) {
	requireRoot(t)
	top := t.TempDir()
	h1, h2 := filepath.Join(top, "h1"), filepath.Join(top, "h2")
	if err := os.WriteFile(h1, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(h1, h2); err != nil {
		t.Fatal(err)
	}
	refused := 0
	if err := ChownTree(top, Tree{UID: 10000, GID: -1, Linked: true, Change: notOwnedBy(10000, 0),
		Refused: func(string) { refused++ }}); err != nil {
		t.Fatal(err)
	}
	if got := owner(t, h2); got != [2]int{10000, 0} || refused != 0 {
		t.Errorf("h2: owner %v, refused %d times; want 10000:0, never refused", got, refused)
	}
}

// A tree deeper than MaxTreeDepth is changed down to that depth, and the
// walk says it went no further.
func TestChownTreeDeep(t *testing.T) {
	requireRoot(t)
	top := filepath.Join(t.TempDir(), "top")
	testprog.DeepChain(t, top, MaxTreeDepth+5)
	err := ChownTree(top, Tree{UID: 10000, GID: 10000, Change: notOwnedBy(10000, 10000)})
	if err == nil {
		t.Fatal("no error for a tree deeper than MaxTreeDepth")
	}
	last := filepath.Join(top, strings.Repeat("d/", MaxTreeDepth))
	if got := owner(t, last); got != [2]int{10000, 10000} {
		t.Errorf("%d dirs deep: owner %v, want 10000:10000", MaxTreeDepth, got)
	}
	if got := owner(t, filepath.Join(last, "d")); got != [2]int{0, 0} {
		t.Errorf("%d dirs deep: owner %v, want 0:0 (not gone into)", MaxTreeDepth+1, got)
	}
}

// A dir above the tree's top swapped for a symlink to root's dir that has
// a dir of the same name (the volume's platforms, given back as
// platforms/pairing): the walk went through it and gave root's tree away.
func TestChownTreeSymlinkAbove(t *testing.T) {
	requireRoot(t)
	base := t.TempDir()
	home, rootDir := filepath.Join(base, "home"), filepath.Join(base, "rootdir")
	for _, d := range []string{filepath.Join(rootDir, "pairing"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(rootDir, "pairing", "secret")
	if err := os.WriteFile(secret, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rootDir, filepath.Join(home, "platforms")); err != nil {
		t.Fatal(err)
	}
	err := ChownTree(filepath.Join(home, "platforms", "pairing"), Tree{UID: 10000, GID: 10000, Change: notOwnedBy(10000, 10000)})
	if err == nil || !errors.Is(err, ErrSymlink) {
		t.Errorf("ChownTree through a symlinked dir: %v, want ErrSymlink", err)
	}
	if got := owner(t, secret); got != [2]int{0, 0} {
		t.Errorf("root's file through the symlink: owner %v, want 0:0", got)
	}
}

// TopOnly changes the top dir alone.
func TestChownTreeTopOnly(t *testing.T) {
	requireRoot(t)
	top := filepath.Join(t.TempDir(), "top")
	if err := os.MkdirAll(filepath.Join(top, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ChownTree(top, Tree{UID: 10000, GID: 10000, TopOnly: true, Change: notOwnedBy(10000, 10000)}); err != nil {
		t.Fatal(err)
	}
	if got := owner(t, top); got != [2]int{10000, 10000} {
		t.Errorf("top: owner %v, want 10000:10000", got)
	}
	if got := owner(t, filepath.Join(top, "sub")); got != [2]int{0, 0} {
		t.Errorf("sub: owner %v, want 0:0 (not gone into)", got)
	}
}
