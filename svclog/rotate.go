package svclog

import (
	"fmt"
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

// prune deletes the oldest archives beyond keep, in the dir opened.
func (w *fileWriter) prune() error {
	dfd := int(w.d.Fd())
	names, err := archivesIn(dfd)
	if err != nil {
		return fmt.Errorf("list %s: %w", w.dir, err)
	}
	for len(names) > max(w.keep, 0) {
		if err := unix.Unlinkat(dfd, names[0], 0); err != nil {
			return fmt.Errorf("remove %s/%s: %w", w.dir, names[0], err)
		}
		names = names[1:]
	}
	return nil
}

// archivesIn lists the archive names in the dir dfd, oldest first.
func archivesIn(dfd int) ([]string, error) {
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), ".")
	defer d.Close()
	all, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range all {
		if strings.HasPrefix(n, "@") && strings.HasSuffix(n, ".s") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}
