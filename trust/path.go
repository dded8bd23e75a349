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
// what path names: every dir above it, and every symlink it leads through
// with the dirs holding them (Judge.AddReplacers). why says what someone
// else could change; an error (a missing dir) is a no too.
func RootOnly(path string) (ok bool, why error) {
	if !filepath.IsAbs(path) {
		return false, fmt.Errorf("%q is not an absolute path", path)
	}
	links, err := Symlinks(path)
	if err != nil {
		return false, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false, err
	}
	var j Judge
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return false, err
	}
	j.Add(path, &st)
	for _, l := range links {
		j.AddReplacers(l.Path, l.Parent, &l.St, &l.Pst)
	}
	for p := real; p != "/"; p = filepath.Dir(p) {
		var st, pst unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return false, err
		}
		if err := unix.Stat(filepath.Dir(p), &pst); err != nil {
			return false, err
		}
		j.AddReplacers(p, filepath.Dir(p), &st, &pst)
	}
	v := j.Verdict()
	switch {
	case v.Root:
		return true, nil
	case v.Refused != nil:
		return false, v.Refused
	}
	return false, fmt.Errorf("uid %d can change %s", v.UID, path)
}
