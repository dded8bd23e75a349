package contenvd

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Modes of the directory and its files: they hold secrets, so only root and
// the user's group may read them.
const (
	DirMode  os.FileMode = 0o750
	FileMode os.FileMode = 0o640
)

// Write replaces dir with a fresh directory holding env (KEY=VALUE entries),
// one file per variable. Whatever was at dir before is removed first (a
// symlink there is removed, never followed), so the directory is exactly the
// boot environment. With gid >= 0 the directory and files are owned by
// (effective uid, gid) — root:<user's group> when hinit is root; gid < 0
// leaves the group as created (hinit not root).
//
// It is all or nothing: the variables are written into a new dot-named dir
// beside dir, which is renamed to dir once every one is there. When a write
// fails (a full /run), that dir is removed and there is no dir at all, never
// one that lacks the variables after the failure (an API key): readers then
// take the environment they were started with.
//
// Entries without '=' and names that are not safe file names are skipped
// with one warning each; a later duplicate of a name wins, as in os/exec.
// It returns what it wrote, as Read would find it.
func Write(dir string, env []string, gid int, log *slog.Logger) (map[string]string, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("remove old %s: %w", dir, err)
	}
	// Made by mkdir, 0700 until filled: nothing can be planted in it, and
	// no one else reads it half-written.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	wrote, err := fillDir(tmp, env, gid, log)
	if err == nil {
		// rename(2) replaces at most an empty dir that appeared at dir
		// meanwhile; a symlink or anything else there makes it fail.
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return wrote, nil
}

// fillDir writes every variable of env into dir, then gives dir its owner
// and mode.
func fillDir(dir string, env []string, gid int, log *slog.Logger) (map[string]string, error) {
	vars := parse(env, log)
	wrote := make(map[string]string, len(vars))
	for _, kv := range vars {
		if err := writeVar(dir, kv[0], kv[1], gid); err != nil {
			return nil, err
		}
		wrote[kv[0]] = kv[1]
	}
	if err := setOwnerMode(dir, gid, DirMode); err != nil {
		return nil, err
	}
	return wrote, nil
}

// parse splits env into (name, value) pairs in first-seen order, the value of
// the last duplicate winning, and warns once for each entry it skips.
func parse(env []string, log *slog.Logger) [][2]string {
	index := make(map[string]int, len(env))
	vars := make([][2]string, 0, len(env))
	for _, e := range env {
		name, value, ok := strings.Cut(e, "=")
		if !ok {
			log.Warn("contenvd: entry without '=' skipped", "entry", e)
			continue
		}
		if err := checkName(name); err != nil {
			log.Warn("contenvd: variable skipped", "name", name, "reason", err.Error())
			continue
		}
		if i, dup := index[name]; dup {
			vars[i][1] = value
			continue
		}
		index[name] = len(vars)
		vars = append(vars, [2]string{name, value})
	}
	return vars
}

// writeVar stores one variable. Write has just created dir and only its
// owner (root) may write in it, so nothing can have been planted there: the
// file is created under its own name (O_EXCL|O_NOFOLLOW all the same),
// without a temporary file and a rename. There is no fsync: the directory
// is rebuilt at every boot, so durability buys nothing.
func writeVar(dir, name, value string, gid int) error {
	final := filepath.Join(dir, name)
	fd, err := unix.Open(final, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", final, err)
	}
	err = fill(fd, gid, value)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlink(final)
		return fmt.Errorf("write %s: %w", final, err)
	}
	return nil
}

// fill gives a new variable file its owner and mode, then its value, with
// one more newline when it ends with one (Read drops one, as s6-envdir
// does). It works on the raw descriptor: a boot writes dozens of these, and
// an *os.File costs a dozen more system calls each.
func fill(fd, gid int, value string) error {
	if strings.HasSuffix(value, "\n") {
		value += "\n"
	}
	if gid >= 0 {
		if err := unix.Fchown(fd, os.Geteuid(), gid); err != nil {
			return err
		}
	}
	if err := unix.Fchmod(fd, uint32(FileMode)); err != nil {
		return err
	}
	for b := []byte(value); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// setOwnerMode gives the directory its owner and exact mode (umask aside).
func setOwnerMode(dir string, gid int, mode os.FileMode) error {
	if gid >= 0 {
		if err := os.Lchown(dir, os.Geteuid(), gid); err != nil {
			return fmt.Errorf("chown %s: %w", dir, err)
		}
	}
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", dir, err)
	}
	return nil
}

// Regroup gives dir and every variable file in it to group gid (a boot
// hook changed the user's group id after Write), never following a link.
func Regroup(dir string, gid int) error {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("regroup %s: %w", dir, err)
	}
	f := os.NewFile(uintptr(dfd), dir)
	defer f.Close()
	if err := unix.Fchown(dfd, -1, gid); err != nil {
		return fmt.Errorf("regroup %s: %w", dir, err)
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("regroup %s: %w", dir, err)
	}
	for _, n := range names {
		if err := unix.Fchownat(dfd, n, -1, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("regroup %s: %w", filepath.Join(dir, n), err)
		}
	}
	return nil
}
