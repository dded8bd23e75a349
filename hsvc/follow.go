package hsvc

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"hinit/control"
	"hinit/svclog"
)

// follow prints what is appended to path until hsvc is interrupted. It
// watches the log's directory with inotify, so it sleeps until something
// happens there, and it notices rotation (current renamed away, a new
// current created) by comparing the file it reads with the file at path:
// it finishes the old file, then reads the new one from its start. f is
// the file already open at its end, or nil.
func (c *cli) follow(path string, f *os.File) error {
	defer func() { f.Close() }()
	c.interrupt()
	changes, stop, err := watchDir(filepath.Dir(path))
	if err != nil {
		return exitf(control.CodeFailed, "follow %s: watch its directory: %v", path, err)
	}
	defer stop()
	for {
		// Catch up first: the file may have grown or been replaced
		// before the watch began, or between two events.
		if f, err = c.catchUp(path, f); err != nil {
			return err
		}
		select {
		case <-c.ctx.Done():
			return nil
		case _, ok := <-changes:
			if !ok {
				return exitf(control.CodeFailed, "follow %s: the watch of its directory ended", path)
			}
			// Whatever changed in the directory (an overflow included),
			// catching up tells.
		}
	}
}

// watchDir reports, on changes, that something happened in dir: a file
// written, created, renamed or removed. It reads inotify through Go's
// netpoller, so hsvc sleeps between changes. stop ends the watch; changes is
// closed if the watch breaks.
func watchDir(dir string) (changes <-chan struct{}, stop func(), err error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, nil, err
	}
	const mask = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
		unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_ONLYDIR
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	in := os.NewFile(uintptr(fd), "inotify")
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		buf := make([]byte, 64<<10)
		for {
			if _, err := in.Read(buf); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default: // a change is already pending
			}
		}
	}()
	return ch, func() { in.Close() }, nil
}

// catchUp copies what f has beyond its offset, then switches to the file
// now at path if that is another one (rotation) and copies it too, after
// the rest of f and every archive made since f was current: a log that
// rotated more than once meanwhile (a slow terminal, a burst) hides no
// file.
func (c *cli) catchUp(path string, f *os.File) (*os.File, error) {
	if err := c.drain(f); err != nil {
		return f, err
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil // rotated away, the new one is not there yet
	case err != nil:
		return f, exitf(control.CodeFailed, "follow %s: %v", path, err)
	}
	if f != nil {
		if cur, err := f.Stat(); err == nil && os.SameFile(cur, st) {
			return f, nil
		}
	}
	next, err := openLog(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if f != nil {
		// f is an archive now, or gone: what was written to it before
		// the rename, then the archives made after it.
		err := c.drain(f)
		if err == nil {
			err = c.archivesAfter(filepath.Dir(path), f)
		}
		f.Close()
		if err != nil {
			next.Close()
			return nil, err
		}
	}
	return next, c.drain(next)
}

// archivesAfter copies every archive of dir made after old, a current
// since rotated, whole and in order. When old is no archive any more
// (pruned: the oldest go first), every archive left is newer.
func (c *cli) archivesAfter(dir string, old *os.File) error {
	names, err := svclog.Archives(dir)
	if err != nil {
		return nil
	}
	ost, err := old.Stat()
	if err != nil {
		return nil
	}
	from := 0
	for i, n := range names {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && os.SameFile(st, ost) {
			from = i + 1
			break
		}
	}
	for _, n := range names[from:] {
		a, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			continue // pruned meanwhile
		}
		_, err = io.Copy(c.stdout, a)
		a.Close()
		if err != nil {
			return exitf(control.CodeFailed, "follow %s: %v", a.Name(), err)
		}
	}
	return nil
}

// drain copies f from its offset to its end; a file that shrank under its
// offset was truncated and is read again from the start.
func (c *cli) drain(f *os.File) error {
	if f == nil {
		return nil
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return exitf(control.CodeFailed, "follow %s: %v", f.Name(), err)
	}
	if st, err := f.Stat(); err == nil && st.Size() < off {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return exitf(control.CodeFailed, "follow %s: %v", f.Name(), err)
		}
	}
	if _, err := io.Copy(c.stdout, f); err != nil {
		return exitf(control.CodeFailed, "follow %s: %v", f.Name(), err)
	}
	return nil
}
