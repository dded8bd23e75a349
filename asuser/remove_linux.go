package asuser

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// RemoveAllAt removes name, in the dir dir, and everything under it, never
// through a symlink, with at most three descriptors of its own open
// however deep the tree is. os.RemoveAll holds one descriptor per level: a
// tree deeper than the descriptor limit, which the hermes user makes in a
// dir of its own in a second (mkdirat and openat from level to level, no
// path length to stop it), took every descriptor of PID 1 while it was
// walked (accept, pipes, log files failed meanwhile), failed with EMFILE
// and was never removed. Here the dirs under name are undone one level at
// a time instead: what a dir found in name holds is renamed into name
// itself (renameat between the two descriptors, never a path), and the
// dir, empty then, is removed; a dir deep down comes up a level at each
// pass. As with os.RemoveAll, a name that is not there is no error.
//
// The dir's owner may be at work in it meanwhile (an unregister of its
// service): adding a level under the deepest one as fast as a pass lifts
// one, or files as fast as a pass removes them, kept the removal, and the
// turn of Do it ran in, for ever. So RemoveAllAt gives up after
// removeBudget (2 s), with errStillFilling.
func RemoveAllAt(dir *os.File, name string) error {
	dfd := int(dir.Fd())
	err := removeEntry(dfd, name)
	switch {
	case err == nil || err == unix.ENOENT:
		return nil
	case err != unix.ENOTEMPTY && err != unix.EEXIST:
		return fmt.Errorf("remove %s: %w", filepath.Join(dir.Name(), name), err)
	}
	top, err := openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("remove %s: %w", filepath.Join(dir.Name(), name), err)
	}
	err = flatten(top, time.Now().Add(removeBudget))
	unix.Close(top)
	if err == nil {
		err = removeEntry(dfd, name)
	}
	if err != nil && err != unix.ENOENT {
		return fmt.Errorf("remove %s: %w", filepath.Join(dir.Name(), name), err)
	}
	return nil
}

// RemoveContents empties the dir path, with RemoveAllAt's rules: never
// through a symlink (path itself included), no descriptor per level of a
// tree, and never the whole listing of a dir in memory (removeBatch names
// at a time: a dir the hermes user filled may hold any number). The dir
// itself stays. It has no time budget: hinit empties its runtime dirs at
// boot, when no process of the image's user runs to fill them.
func RemoveContents(path string) error {
	top, err := openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("empty %s: %w", path, err)
	}
	defer unix.Close(top)
	if err := flatten(top, time.Time{}); err != nil {
		return fmt.Errorf("empty %s: %w", path, err)
	}
	return nil
}

// removeEntry unlinks name in dfd, a file, a symlink or an empty dir.
func removeEntry(dfd int, name string) error {
	err := unix.Unlinkat(dfd, name, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		if derr := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); derr != unix.ENOTDIR {
			err = derr
		}
	}
	return err
}

// removeBatch is how many names a pass reads from a dir at a time.
const removeBatch = 256

// removeBudget is how long RemoveAllAt may take: a service dir on a tmpfs
// goes in milliseconds. A test shortens it.
var removeBudget = 2 * time.Second

// errStillFilling: the dir was not empty by the end of the budget.
var errStillFilling = errors.New("not removed within its time (a large tree, or something adding to it): left as it is; removing it again goes on from there")

// flatten empties the dir top, pass after pass, until a pass finds it
// empty, or removes and moves nothing: the first error then says why. With
// a deadline (not zero), it gives up then with errStillFilling.
func flatten(top int, deadline time.Time) error {
	var seq int
	for {
		seen, done, err := flattenPass(top, &seq, deadline)
		switch {
		case seen == 0:
			return nil
		case done == 0 && err != nil:
			return err
		case done == 0:
			return unix.ENOTEMPTY
		case !deadline.IsZero() && time.Now().After(deadline):
			return errStillFilling
		}
	}
}

// flattenPass reads top once and removes each entry; one that is a dir
// with something in it gets its entries renamed into top, and goes. It
// returns how many entries it saw, how many removals and renames it made,
// and the first error. Past deadline (when not zero) it stops reading the
// dir: one its owner fills may have no end.
func flattenPass(top int, seq *int, deadline time.Time) (seen, done int, first error) {
	fd, err := openat(top, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return 1, 0, err
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	note := func(err error) {
		if first == nil {
			first = err
		}
	}
	for {
		names, rerr := d.Readdirnames(removeBatch)
		for _, n := range names {
			seen++
			err := removeEntry(top, n)
			if err == unix.ENOTEMPTY || err == unix.EEXIST {
				var moved int
				moved, err = hoist(top, n, seq, deadline)
				done += moved
				if err == nil {
					err = removeEntry(top, n)
				}
			}
			if err == nil || err == unix.ENOENT { // gone meanwhile: progress too
				done++
			} else {
				note(fmt.Errorf("%s: %w", n, err))
			}
		}
		if rerr == io.EOF || !deadline.IsZero() && time.Now().After(deadline) {
			return seen, done, first
		}
		if rerr != nil {
			note(rerr)
			return max(seen, 1), done, first
		}
	}
}

// hoist removes what it can of the dir name in top, and renames the rest
// (non-empty dirs) into top under names of its own, never replacing one.
// It returns how many entries it removed or renamed. Past deadline (when
// not zero) it stops, as flattenPass does.
func hoist(top int, name string, seq *int, deadline time.Time) (int, error) {
	fd, err := openat(top, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return 0, err
	}
	d := os.NewFile(uintptr(fd), name)
	defer d.Close()
	done := 0
	for {
		names, rerr := d.Readdirnames(removeBatch)
		for _, n := range names {
			err := removeEntry(fd, n)
			if err == unix.ENOTEMPTY || err == unix.EEXIST {
				err = renameFresh(fd, n, top, seq)
			}
			switch {
			case err == nil:
				done++
			case err != unix.ENOENT:
				return done, err
			}
		}
		if rerr == io.EOF || !deadline.IsZero() && time.Now().After(deadline) {
			return done, nil
		}
		if rerr != nil {
			return done, rerr
		}
	}
}

// renameFresh renames name in from to a name in to that is free.
func renameFresh(from int, name string, to int, seq *int) error {
	for {
		*seq++
		fresh := ".hinit-rm-" + strconv.Itoa(*seq)
		err := unix.Renameat2(from, name, to, fresh, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) { // a file system without RENAME_NOREPLACE
			var st unix.Stat_t
			if unix.Fstatat(to, fresh, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				continue
			}
			err = unix.Renameat(from, name, to, fresh)
		}
		if err != unix.EEXIST {
			return err
		}
	}
}
