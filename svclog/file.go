package svclog

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"hinit/asuser"
)

// File layout of a log dir, as in s6-log:
//
//	current                       the file being written
//	@20260521T061805.123456Z.s    archives, named for the time they were
//	                              rotated (UTC), oldest first by name
//
// Each line is "2026-05-21T06:18:05.123456Z text": the time hinit read it,
// RFC 3339 in UTC with microseconds, fixed width, so that lines sort and
// align.
const (
	currentName   = "current"
	archiveLayout = "@20060102T150405.000000Z.s"
	stampLayout   = "2006-01-02T15:04:05.000000Z"
	dirPerm       = 0o750
	filePerm      = 0o640
)

// retryEvery spaces attempts to create the dir, open current or rotate
// after one failed, so that a broken dir costs a syscall burst per interval
// rather than per line.
const retryEvery = time.Second

// fileWriter writes lines to <dir>/current and rotates it.
type fileWriter struct {
	dir     string
	owner   asuser.ID
	maxSize int64
	keep    int
	now     func() time.Time
	log     *slog.Logger

	// Owned by the output's goroutine.
	f       *os.File  // current, nil until opened
	size    int64     // bytes in current
	partial bool      // a failed write left current mid-line
	retryAt time.Time // no open or rotation attempt before this
	err     error     // why the last open failed
}

func newFileWriter(o Options, log *slog.Logger) *fileWriter {
	w := &fileWriter{dir: o.Dir, owner: o.Owner, maxSize: o.MaxSize, keep: o.Keep, now: o.Now, log: log}
	if w.maxSize <= 0 {
		w.maxSize = DefaultMaxSize
	}
	if w.keep == 0 {
		w.keep = DefaultKeep
	}
	return w
}

// writeChunk is the most bytes fileWriter gives one write(2).
const writeChunk = 64 << 10

// write appends lines to current, several per write(2), rotating it on the
// way whenever the next line would take it past maxSize.
func (w *fileWriter) write(ls []line) (int, error) {
	done := 0
	for done < len(ls) {
		if err := w.ready(entrySize(ls[done])); err != nil {
			return done, err
		}
		buf, ends := w.fill(ls[done:])
		n, err := w.f.Write(buf)
		w.size += int64(n)
		if err != nil {
			whole := 0
			for whole < len(ends) && ends[whole] <= n {
				whole++
			}
			if n > 0 && (whole == 0 || ends[whole-1] != n) {
				w.partial = true // the next line starts on a line of its own
			}
			return done + whole, err // "write <path>: <errno>"
		}
		w.partial = false
		done += len(ends)
	}
	return done, nil
}

// fill formats the lines that fit in current and in one write, at least
// one, and returns them and where each line ends in them.
func (w *fileWriter) fill(ls []line) (buf []byte, ends []int) {
	if w.partial {
		buf = append(buf, '\n')
	}
	room := min(w.maxSize-w.size, writeChunk)
	for _, l := range ls {
		if len(ends) > 0 && int64(len(buf))+entrySize(l) > room {
			break
		}
		t := l.t
		if t.IsZero() {
			t = w.now()
		}
		buf = append(t.UTC().AppendFormat(buf, stampLayout), ' ')
		buf = append(append(buf, l.text...), '\n')
		ends = append(ends, len(buf))
	}
	return buf, ends
}

// entrySize is the size of l in the file.
func entrySize(l line) int64 { return int64(len(stampLayout) + 1 + len(l.text) + 1) }

// ready makes sure current is open and has room for n more bytes.
func (w *fileWriter) ready(n int64) error {
	if w.f == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	if w.size > 0 && w.size+n > w.maxSize && w.due() {
		if err := w.rotate(); err != nil {
			w.failed(err)
			w.log.Warn("log rotation failed", "err", err)
			if w.f == nil {
				return w.err
			}
		}
	}
	return nil
}

// open creates the dir and opens current, as the owner.
func (w *fileWriter) open() error {
	if !w.due() {
		return w.err
	}
	err := asuser.Do(w.owner, func() error {
		if err := asuser.MkdirAll(w.dir, dirPerm); err != nil {
			return err
		}
		return w.openCurrent()
	})
	if err != nil {
		w.failed(fmt.Errorf("open log: %w", err))
		return w.err
	}
	return nil
}

// due reports whether an open or rotation may be attempted.
func (w *fileWriter) due() bool { return !w.now().Before(w.retryAt) }

// failed records a failed open or rotation and puts off the next attempt.
func (w *fileWriter) failed(err error) {
	w.err = err
	w.retryAt = w.now().Add(retryEvery)
}

// openCurrent opens current for appending; it runs as the owner.
func (w *fileWriter) openCurrent() error {
	f, err := asuser.OpenFile(filepath.Join(w.dir, currentName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, filePerm)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	w.f, w.size, w.partial = f, st.Size(), false
	return nil
}

func (w *fileWriter) close() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}
