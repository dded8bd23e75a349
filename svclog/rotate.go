package svclog

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"hinit/asuser"
)

// rotate renames current to a new archive, deletes the archives beyond
// keep and opens a fresh current, all as the owner and relative to the dir
// opened (renameat, unlinkat, openat): a dir moved or swapped for a symlink
// meanwhile cannot make it touch anything else. Once current is renamed the
// old file is closed whatever happens next, so that no line goes into an
// archive.
func (w *fileWriter) rotate() error {
	return asuser.Do(w.owner, func() error {
		dfd := int(w.d.Fd())
		archive := archiveName(dfd, w.now())
		if err := unix.Renameat(dfd, currentName, dfd, archive); err != nil {
			return fmt.Errorf("rotate %s/%s: %w", w.dir, currentName, err)
		}
		w.closeCurrent()
		if err := w.prune(); err != nil {
			w.log.Warn("log archive cleanup failed", "err", err)
		}
		return w.openCurrent()
	})
}

// archiveName names an archive for time t, moved on by microseconds until
// the name is free in the dir dfd (a clock that stands still, or jumps back).
func archiveName(dfd int, t time.Time) string {
	for {
		name := t.UTC().Format(archiveLayout)
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return name
		}
		t = t.Add(time.Microsecond)
	}
}

// prune deletes the oldest archives beyond keep, in the dir opened. It
// reads the dir in batches and holds at most keep+1 names, however many
// entries the dir's owner has put there: an archive older than the keep
// newest seen so far is deleted as soon as it is known to be.
func (w *fileWriter) prune() error {
	dfd := int(w.d.Fd())
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("list %s: %w", w.dir, err)
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	keep := max(w.keep, 0)
	var newest []string // sorted, oldest first
	for {
		batch, err := d.Readdirnames(pruneBatch)
		for _, n := range batch {
			if !strings.HasPrefix(n, "@") || !strings.HasSuffix(n, ".s") {
				continue
			}
			i, _ := slices.BinarySearch(newest, n)
			newest = slices.Insert(newest, i, n)
			if len(newest) <= keep {
				continue
			}
			if err := unix.Unlinkat(dfd, newest[0], 0); err != nil && err != unix.ENOENT {
				return fmt.Errorf("remove %s/%s: %w", w.dir, newest[0], err)
			}
			newest = slices.Delete(newest, 0, 1)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", w.dir, err)
		}
	}
}

// pruneBatch is how many names prune reads from the dir at a time.
const pruneBatch = 256
