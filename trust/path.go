package trust

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Link is an entry met resolving a path (a dir or a symlink): its lstat,
// and the stat of the dir holding it, whose writers may replace it
// (Judge.AddReplacers).
type Link struct {
	Path, Parent string
	St, Pst      unix.Stat_t
}

// Resolve resolves the absolute path as the kernel does, and lists who
// chose where it leads: every entry it goes through up to its last
// symlink, dirs included, those of the symlinks' targets too. Whoever may
// replace one of them may put a symlink of their own there, to anywhere.
// The entries after the last symlink are left out: one of those can only
// be replaced by renaming a dir that already is on the same file system,
// which is the resolved path's own matter (see scandir's execParent).
func Resolve(path string) (resolved string, chose []Link, err error) {
	var met []Link
	n := 0
	resolved, err = resolve("/", path, &n, func(l Link) {
		met = append(met, l)
		if l.St.Mode&unix.S_IFMT == unix.S_IFLNK {
			chose = met
		}
	})
	return resolved, slices.Clip(chose), err
}

// RootOnly reports whether only root can put a program into the dir path,
// a dir of PATH for a program root runs: the dir must be root's and
// writable by no one else (Judge.Add), and so must be whatever chooses
// what path names: each entry the path goes through as the kernel
// resolves it, dirs and symlinks, those of the symlinks' targets included,
// with the dir holding it (Judge.AddReplacers). A path with a "." or ".."
// component is refused: a lookup by the text and the kernel's may not
// agree. why says what someone else could change; an error (a missing dir)
// is a no too.
func RootOnly(path string) (ok bool, why error) {
	if err := cleanAbs(path); err != nil {
		return false, err
	}
	return rootOnly(path, unix.S_IFDIR)
}

// cleanAbs refuses a path that is not absolute or has a "." or ".."
// component (repeated and trailing slashes are harmless).
func cleanAbs(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%q is not an absolute path", path)
	}
	for _, c := range strings.Split(path, "/") {
		if c == "." || c == ".." {
			return fmt.Errorf("%q has a %q in it", path, c)
		}
	}
	return nil
}

// rootOnly judges path, which must resolve to an object of type typ
// (unix.S_IFDIR, unix.S_IFREG): every entry it goes through with the dir
// holding it, and the object itself.
func rootOnly(path string, typ uint32) (bool, error) {
	var j Judge
	n := 0
	real, err := resolve("/", path, &n, func(l Link) { j.AddReplacers(l.Path, l.Parent, &l.St, &l.Pst) })
	if err != nil {
		return false, err
	}
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return false, err
	}
	if st.Mode&unix.S_IFMT != typ {
		return false, fmt.Errorf("%s is not a %s", path, map[uint32]string{unix.S_IFDIR: "dir", unix.S_IFREG: "regular file"}[typ])
	}
	j.Add(path, &st)
	v := j.Verdict()
	switch {
	case v.Root:
		return true, nil
	case v.Refused != nil:
		return false, v.Refused
	}
	return false, fmt.Errorf("uid %d can change %s", v.UID, path)
}

// resolve resolves rel from the resolved dir dir (rel absolute: from /)
// as the kernel does, shows visit every entry it goes through, dirs and
// symlinks, with the dir holding it, and returns the resolved path. links
// counts the symlinks followed, as the kernel bounds them.
func resolve(dir, rel string, links *int, visit func(Link)) (string, error) {
	if filepath.IsAbs(rel) {
		dir = "/"
	}
	for _, c := range strings.Split(rel, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			dir = filepath.Dir(dir) // dir is resolved: its parent is the kernel's too
			continue
		}
		l := Link{Path: filepath.Join(dir, c), Parent: dir}
		if err := unix.Lstat(l.Path, &l.St); err != nil {
			return "", fmt.Errorf("stat %s: %w", l.Path, err)
		}
		if err := unix.Stat(dir, &l.Pst); err != nil {
			return "", fmt.Errorf("stat %s: %w", dir, err)
		}
		visit(l)
		if l.St.Mode&unix.S_IFMT != unix.S_IFLNK {
			dir = l.Path
			continue
		}
		if *links++; *links > 40 {
			return "", fmt.Errorf("%s: %w", l.Path, unix.ELOOP)
		}
		target, err := os.Readlink(l.Path)
		if err != nil {
			return "", err
		}
		if dir, err = resolve(dir, target, links, visit); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// RootProgram says why the program file p, found in a dir RootOnly let
// through, is not root's only (nil when it is): p must be root's and
// writable by no one else, and when p is a symlink, so must be every
// entry the kernel goes through to the file (RootOnly's rule).
func RootProgram(p string) error {
	if err := cleanAbs(p); err != nil {
		return err
	}
	if ok, why := rootOnly(p, unix.S_IFREG); !ok {
		return why
	}
	return nil
}
