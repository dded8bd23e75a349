package svclog

import (
	"container/heap"
	"fmt"
	"io"
	"os"
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
//
// The dir is listed at the first rotation after it is opened (prune), and
// its keep newest archives are known from then on (kept): the dir is its
// owner's, who may fill it with other entries, and a definition of its own
// may ask max_size: 1, a rotation per line. Listing it at every rotation
// cost PID 1 a read of every entry per line (19 ms a line among 20,000).
// An archive planted after the listing waits for the dir's next opening.
func (w *fileWriter) rotate() error {
	return asuser.Do(w.owner, func() error {
		dfd := int(w.d.Fd())
		if w.kept == nil {
			if err := w.prune(); err != nil {
				w.log.Warn("log archive cleanup failed", "err", err)
			}
		}
		archive := archiveName(dfd, w.now(), w.newest)
		if err := unix.Renameat(dfd, currentName, dfd, archive); err != nil {
			return fmt.Errorf("rotate %s/%s: %w", w.dir, currentName, err)
		}
		w.newest = archive
		w.closeCurrent()
		if err := w.pruneKept(archive); err != nil {
			w.log.Warn("log archive cleanup failed", "err", err)
		}
		return w.openCurrent()
	})
}

// archiveName names an archive for time t, or for just after the archive
// named after when t is not later, and moves it on by microseconds until
// the name is free in the dir dfd (a clock that stands still). Names never
// go back: after a clock stepped back (NTP, a VM resumed), an archive that
// sorted before the older ones would be the first pruned, the newest lines
// lost while older ones were kept.
func archiveName(dfd int, t time.Time, after string) string {
	// (Past the year 9999 a name has a fifth digit and sorts first: there
	// the clock names it, and after is a name the dir's owner planted.)
	if a, err := time.Parse(archiveLayout, after); err == nil && !t.After(a) && a.Year() < 9999 {
		t = a.Add(time.Microsecond)
	}
	for {
		name := t.UTC().Format(archiveLayout)
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return name
		}
		t = t.Add(time.Microsecond)
	}
}

// prune deletes the oldest archives beyond keep, in the dir opened, and
// learns the newest archive's name (newest) and the keep newest (kept, when
// the whole dir could be read). It reads the dir in batches and holds at
// most keep names, however many entries the dir's owner has put there: an
// archive older than the keep newest seen so far is deleted as soon as it
// is known to be. The newest are a min-heap, so a dir of N names costs
// N log keep. An archive that cannot be deleted (a dir planted under an
// archive's name) is passed over, and the first such error is returned
// once the rest are done.
func (w *fileWriter) prune() error {
	keep := max(w.keep, 0)
	newest := &names{} // the keep newest seen so far, the oldest of them first
	var first error
	remove := func(n string) {
		if err := w.removeArchive(n); err != nil && first == nil {
			first = err
		}
	}
	err := w.eachArchive(func(n string) {
		if _, err := time.Parse(archiveLayout, n); err == nil { // a name of ours
			w.newest = max(w.newest, n)
		}
		switch {
		case newest.Len() < keep:
			heap.Push(newest, n)
		case keep > 0 && compareArchives(n, (*newest)[0]) > 0:
			remove((*newest)[0])
			(*newest)[0] = n
			heap.Fix(newest, 0)
		default:
			remove(n)
		}
	})
	if err != nil {
		return err
	}
	w.kept = newest
	return first
}

// pruneKept adds archive, just made, to the keep newest known and deletes
// the oldest beyond keep, without listing the dir; with none known (the
// listing failed) it lists the dir again (prune).
func (w *fileWriter) pruneKept(archive string) error {
	if w.kept == nil {
		return w.prune()
	}
	heap.Push(w.kept, archive)
	var first error
	for w.kept.Len() > max(w.keep, 0) {
		if err := w.removeArchive(heap.Pop(w.kept).(string)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// makeRoom deletes the oldest archive of the dir opened, as the owner, when
// a write found the filesystem full, and reports whether it did, so that
// the write is tried again: the newest lines are worth more than the
// oldest kept. With keep archives of max_size more than the filesystem
// holds, the archives filled it, current never reached max_size again, and
// rotation, the only prune, never came: every new line was lost while the
// oldest archives stayed. One archive goes per full write, so a
// filesystem filled by something else takes this log's archives only as
// far as its new lines need the room.
func (w *fileWriter) makeRoom() bool {
	removed := ""
	asuser.Do(w.owner, func() error {
		if w.kept == nil {
			if err := w.prune(); err != nil {
				return err
			}
		}
		for w.kept.Len() > 0 && removed == "" {
			n := heap.Pop(w.kept).(string)
			// One gone already (its owner removed it) made no room.
			if unix.Unlinkat(int(w.d.Fd()), n, 0) == nil {
				removed = n
			}
		}
		return nil
	})
	if removed != "" {
		w.log.Warn("log filesystem full: the oldest archive removed to make room for new lines", "dir", w.dir, "archive", removed)
	}
	return removed != ""
}

// removeArchive deletes the archive n of the dir opened; one gone already
// is no error.
func (w *fileWriter) removeArchive(n string) error {
	if err := unix.Unlinkat(int(w.d.Fd()), n, 0); err != nil && err != unix.ENOENT {
		return fmt.Errorf("remove %s/%s: %w", w.dir, n, err)
	}
	return nil
}

// eachArchive calls fn with the name of each archive in the dir opened,
// read in batches.
func (w *fileWriter) eachArchive(fn func(name string)) error {
	w.listed++
	fd, err := unix.Openat(int(w.d.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("list %s: %w", w.dir, err)
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	for {
		batch, err := d.Readdirnames(pruneBatch)
		for _, n := range batch {
			if IsArchive(n) {
				fn(n)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", w.dir, err)
		}
	}
}

// names is a min-heap of archive names, the oldest first (compareArchives).
type names []string

func (h names) Len() int           { return len(h) }
func (h names) Less(i, j int) bool { return compareArchives(h[i], h[j]) < 0 }
func (h names) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *names) Push(x any)        { *h = append(*h, x.(string)) }
func (h *names) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// pruneBatch is how many names prune reads from the dir at a time.
const pruneBatch = 256
