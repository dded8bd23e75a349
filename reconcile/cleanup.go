package reconcile

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// removeStale unlinks the PID files of a previous container in dir. The
// dir is opened without following a final symlink and the files are
// unlinked relative to it; unlink(2) removes a symlink itself, never its
// target. A missing file is fine; one warning is returned per failure.
func removeStale(dir string) []error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return []error{fmt.Errorf("remove stale files in %s: %w", dir, err)}
	}
	defer unix.Close(fd)
	var errs []error
	for _, name := range staleFiles {
		// Not there, nothing to remove (a read-only volume says EROFS
		// to an unlink of a name that is not there).
		var st unix.Stat_t
		if errors.Is(unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW), unix.ENOENT) {
			continue
		}
		err := unix.Unlinkat(fd, name, 0)
		if err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("remove %s: %w", filepath.Join(dir, name), err))
		}
	}
	return errs
}
