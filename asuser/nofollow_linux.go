package asuser

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrSymlink is wrapped by every error of MkdirAll, OpenFile and
// WriteFileAtomic that met a symlink where it expected a directory or a
// file. Every component of their paths must be real: a path that goes
// through a symlink (even a harmless one like /var/run) is refused.
var ErrSymlink = errors.New("path component is a symlink")

// MkdirAll is os.MkdirAll that never follows a symlink: it walks path one
// component at a time with openat(O_NOFOLLOW) and creates missing ones with
// mkdirat(perm) (umask applies).
func MkdirAll(path string, perm os.FileMode) error {
	fd, err := walkDir(path, true, perm)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// OpenDir opens the directory path for reading, never through a symlink,
// and when create is set creates its missing components with perm first.
// The descriptor names the same directory whatever is renamed later, so
// renameat, unlinkat and openat relative to it never reach anywhere else.
func OpenDir(path string, create bool, perm os.FileMode) (*os.File, error) {
	pfd, err := walkDir(path, create, perm)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	fd, err := openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open dir %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenFile is os.OpenFile that never follows a symlink, neither in the
// directories leading to path nor in path itself.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(filepath.Clean(path))
	dfd, err := walkDir(dir, false, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	fd, err := openat(dfd, base, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ErrNotRegular is wrapped by OpenRegular's error for anything but a
// regular file (a FIFO, a device, a dir).
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading as a file someone else may have
// planted must be opened: never through a symlink (OpenFile), without
// blocking on a FIFO (O_NONBLOCK, harmless for a regular file), and only a
// regular file. The files of the hermes user's dirs that root reads
// (gateway_state.json, a profile's config.yaml, a service's log) all go
// through it.
func OpenRegular(path string) (*os.File, error) {
	f, err := OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("open %s: %w", path, ErrNotRegular)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// WriteFileAtomic replaces path with data: it writes a temporary file whose
// name starts with '.' in the same directory (O_EXCL, O_NOFOLLOW), syncs it
// and renames it over path, so a reader sees the old or the new content,
// never a mix. A symlink at path is replaced, not followed. perm is the mode
// of the new file, exactly (the umask does not apply).
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return WriteFileAtomicIf(path, data, perm, nil)
}

// ErrReplaced is WriteFileAtomicIf's error when what is at path is not what
// its caller read.
var ErrReplaced = errors.New("replaced by another writer meanwhile")

// WriteFileAtomicIf is WriteFileAtomic for a caller that read path and
// merged into what it read: once the temporary file is written and synced,
// just before the rename, same is called with what is at path now (its
// lstat; nil when nothing is), and when it says another writer replaced
// or rewrote the file since the read, path is left as it is and the error
// wraps ErrReplaced: the caller reads again and merges again. A nil same
// checks nothing.
func WriteFileAtomicIf(path string, data []byte, perm os.FileMode, same func(now *unix.Stat_t) bool) error {
	dir, base := filepath.Split(filepath.Clean(path))
	dfd, err := walkDir(dir, false, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	tmp, err := writeTemp(dfd, base, data, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if same != nil {
		var st unix.Stat_t
		now := &st
		if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			now = nil
		}
		if !same(now) {
			unix.Unlinkat(dfd, tmp, 0)
			return fmt.Errorf("write %s: %w", path, ErrReplaced)
		}
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return syncDir(dfd)
}

// writeTemp creates a new temporary file for base in dfd, holding data.
func writeTemp(dfd int, base string, data []byte, perm os.FileMode) (string, error) {
	tmp := TempName(base)
	fd, err := openat(dfd, tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, uint32(perm.Perm()))
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = f.Chmod(perm.Perm()) // exactly perm, whatever the umask
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return "", err
	}
	return tmp, nil
}

// syncDir makes a rename in the directory dfd durable.
func syncDir(dfd int) error {
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	return nil
}

// walkDir opens the directory path (an O_PATH descriptor) one component at
// a time from / or the working directory, refusing symlinks, creating
// missing components with perm when create is set.
func walkDir(path string, create bool, perm os.FileMode) (int, error) {
	path = filepath.Clean(path)
	start := "."
	if filepath.IsAbs(path) {
		start = "/"
	}
	fd, err := unix.Open(start, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", start, err)
	}
	walked := strings.TrimSuffix(start, ".")
	for _, c := range strings.Split(path, "/") {
		if c == "" || c == "." {
			continue
		}
		walked += c
		next, err := stepDir(fd, c, create, perm)
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("open dir %s: %w", walked, err)
		}
		fd, walked = next, walked+"/"
	}
	return fd, nil
}

// stepDir opens the directory name inside dfd, creating it if asked.
func stepDir(dfd int, name string, create bool, perm os.FileMode) (int, error) {
	const flags = unix.O_PATH | unix.O_DIRECTORY
	fd, err := openat(dfd, name, flags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		err = unix.Mkdirat(dfd, name, uint32(perm.Perm()))
		if err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = openat(dfd, name, flags, 0)
		}
	}
	return fd, err
}

// openat is openat(2) with O_NOFOLLOW and O_CLOEXEC added, retried on
// EINTR. When name is a symlink the error is ErrSymlink: the kernel says
// ELOOP, or ENOTDIR when O_DIRECTORY was asked for.
func openat(dfd int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dfd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ELOOP || err == unix.ENOTDIR && isSymlink(dfd, name):
			return -1, ErrSymlink
		case err != nil:
			return -1, err
		}
		return fd, nil
	}
}

// isSymlink reports whether name in dfd is a symlink.
func isSymlink(dfd int, name string) bool {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
