package svclog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hinit/asuser"
)

// rotate renames current to a new archive, deletes the archives beyond
// keep and opens a fresh current, all as the owner. Once current is renamed
// the old file is closed whatever happens next, so that no line goes into
// an archive.
func (w *fileWriter) rotate() error {
	return asuser.Do(w.owner, func() error {
		archive := w.archiveName(w.now())
		cur := filepath.Join(w.dir, currentName)
		if err := os.Rename(cur, filepath.Join(w.dir, archive)); err != nil {
			return fmt.Errorf("rotate: %w", err)
		}
		w.close()
		if err := w.prune(); err != nil {
			w.log.Warn("log archive cleanup failed", "err", err)
		}
		return w.openCurrent()
	})
}

// archiveName names an archive for time t, moved on by microseconds until
// the name is free (a clock that stands still, or jumps back).
func (w *fileWriter) archiveName(t time.Time) string {
	for {
		name := t.UTC().Format(archiveLayout)
		if _, err := os.Lstat(filepath.Join(w.dir, name)); err != nil {
			return name
		}
		t = t.Add(time.Microsecond)
	}
}

// prune deletes the oldest archives beyond keep.
func (w *fileWriter) prune() error {
	names, err := archives(w.dir)
	if err != nil {
		return err
	}
	for len(names) > max(w.keep, 0) {
		if err := os.Remove(filepath.Join(w.dir, names[0])); err != nil {
			return err
		}
		names = names[1:]
	}
	return nil
}

// archives lists the archive names in dir, oldest first.
func archives(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "@") && strings.HasSuffix(n, ".s") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}
