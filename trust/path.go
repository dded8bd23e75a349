package trust

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Link is a symlink met resolving a path: its lstat, and the stat of the
// dir holding it, whose writers may replace it (Judge.AddReplacers).
type Link struct {
	Path, Parent string
	St, Pst      unix.Stat_t
}

// Symlinks lists the symlinks resolving the absolute path goes through,
// those of their targets included, as the kernel follows them.
func Symlinks(path string) ([]Link, error) { return symlinks(path, 0) }

func symlinks(path string, depth int) ([]Link, error) {
	if depth > 40 {
		return nil, fmt.Errorf("%s: %w", path, unix.ELOOP)
	}
	var links []Link
	dir := "/"
	for _, c := range strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/") {
		if c == "" {
			continue
		}
		next := filepath.Join(dir, c)
		l := Link{Path: next, Parent: dir}
		if err := unix.Lstat(next, &l.St); err != nil {
			return nil, fmt.Errorf("stat %s: %w", next, err)
		}
		if l.St.Mode&unix.S_IFMT != unix.S_IFLNK {
			dir = next
			continue
		}
		if err := unix.Stat(dir, &l.Pst); err != nil {
			return nil, fmt.Errorf("stat %s: %w", dir, err)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		sub, err := symlinks(target, depth+1)
		if err != nil {
			return nil, err
		}
		links = append(append(links, l), sub...)
		if dir, err = filepath.EvalSymlinks(target); err != nil {
			return nil, err
		}
	}
	return links, nil
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
	real, err := resolveJudged(&j, "/", path, &n)
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

// resolveJudged resolves rel from the resolved dir dir (rel absolute: from
// /) as the kernel does, showing j every entry it goes through with the
// dir holding it, and returns the resolved path. links counts the
// symlinks followed, as the kernel bounds them.
func resolveJudged(j *Judge, dir, rel string, links *int) (string, error) {
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
		next := filepath.Join(dir, c)
		var st, pst unix.Stat_t
		if err := unix.Lstat(next, &st); err != nil {
			return "", fmt.Errorf("stat %s: %w", next, err)
		}
		if err := unix.Stat(dir, &pst); err != nil {
			return "", fmt.Errorf("stat %s: %w", dir, err)
		}
		j.AddReplacers(next, dir, &st, &pst)
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			dir = next
			continue
		}
		if *links++; *links > 40 {
			return "", fmt.Errorf("%s: %w", next, unix.ELOOP)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if dir, err = resolveJudged(j, dir, target, links); err != nil {
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
