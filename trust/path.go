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
// with the dir holding it (Judge.AddReplacers). Only a clean absolute path
// is judged: with "." or ".." a lookup by the text and the kernel's may
// not agree. why says what someone else could change; an error (a missing
// dir) is a no too.
func RootOnly(path string) (ok bool, why error) {
	if !filepath.IsAbs(path) || path != filepath.Clean(path) {
		return false, fmt.Errorf("%q is not a clean absolute path", path)
	}
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
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false, fmt.Errorf("%s is not a dir", path)
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
// writable by no one else, and when p is a symlink, so must be the dir of
// the file it names (RootOnly).
func RootProgram(p string) error {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		if ok, why := RootOnly(filepath.Dir(real)); !ok {
			return why
		}
		p = real
		if err := unix.Stat(p, &st); err != nil {
			return err
		}
	}
	switch mode := st.Mode & 0o7777; {
	case st.Uid != 0:
		return fmt.Errorf("%s is owned by uid %d", p, st.Uid)
	case mode&0o022 != 0:
		return fmt.Errorf("%s is writable by its group or every user (mode %04o)", p, mode)
	}
	return nil
}
