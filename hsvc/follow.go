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
// it finishes the old file, then reads the new one from its start. The
// directory itself may not be there yet (a service that never ran) or be
// made again (removed or moved away, svclog makes it anew at the next
// line): the watch follows the path, not the dir first seen. f is the file
// already open at its end, or nil.
func (c *cli) follow(path string, f *os.File) error {
	defer func() { f.Close() }()
	c.interrupt()
	w, err := watchDir(filepath.Dir(path))
	if err != nil {
		return exitf(control.CodeFailed, "follow %s: watch its directory: %v", path, err)
	}
	defer w.stop()
	followWatching(path)
	for {
		// Catch up first: the file may have grown or been replaced
		// before the watch began, or between two events.
		if f, err = c.catchUp(path, f); err != nil {
			return err
		}
		select {
		case <-c.ctx.Done():
			return nil
		case _, ok := <-w.changes:
			if !ok {
				return exitf(control.CodeFailed, "follow %s: the watch of its directory ended", path)
			}
			// Whatever changed in the directory (an overflow included),
			// catching up tells; the dir may be another one now.
			if err := w.arm(); err != nil {
				return exitf(control.CodeFailed, "follow %s: watch its directory: %v", path, err)
			}
		}
	}
}

// followWatching is called once follow's watch is set up; a test waits
// for it.
var followWatching = func(path string) {}

// Masks of a dirWatch: what happens in the log's dir, and what happens to
// the dir in its parent (or, while there is no parent, its nearest
// ancestor there is): made, removed, renamed. The parent is watched too
// because a removed dir tells its own watch nothing while a file in it is
// open (hsvc's, of the old current): the dir's inode lives on.
const (
	dirMask = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
		unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_ONLYDIR |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	ancestorMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
)

// dirWatch reports, on changes, that something happened in dir (a file
// written, created, renamed or removed) or to dir in its parent. It reads
// inotify through Go's netpoller, so hsvc sleeps between changes. changes
// is closed if the watch breaks.
type dirWatch struct {
	changes <-chan struct{}
	dir     string
	fd      int
	in      *os.File
	wd, anc int // watch descriptors of dir and of its parent (or nearest ancestor); -1: none
}

// watchDir begins a dirWatch of dir.
func watchDir(dir string) (*dirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	w := &dirWatch{dir: dir, fd: fd, wd: -1, anc: -1}
	if err := w.arm(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	w.in = os.NewFile(uintptr(fd), "inotify")
	ch := make(chan struct{}, 1)
	w.changes = ch
	go func() {
		defer close(ch)
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.in.Read(buf); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default: // a change is already pending
			}
		}
	}()
	return w, nil
}

// arm watches the dir now at w.dir and its parent (while there is no
// parent, the nearest ancestor there is). Called after each change: the
// dir may have been removed, moved away or made since. A parent hsvc may
// not watch is done without while the dir is there.
func (w *dirWatch) arm() error {
	anc, aerr := w.watchAncestor()
	if aerr == nil {
		w.swap(&w.anc, anc)
	}
	wd, err := unix.InotifyAddWatch(w.fd, w.dir, dirMask)
	switch {
	case err == nil:
		w.swap(&w.wd, wd)
		return nil
	case !errors.Is(err, unix.ENOENT):
		return err
	case aerr != nil:
		return aerr
	}
	// No dir (yet): the ancestor's watch tells when it is made; one made
	// before that watch began was found by the add above.
	w.swap(&w.wd, -1)
	return nil
}

// watchAncestor watches the parent of w.dir, or the nearest ancestor
// there is.
func (w *dirWatch) watchAncestor() (int, error) {
	for d := filepath.Dir(w.dir); ; d = filepath.Dir(d) {
		wd, err := unix.InotifyAddWatch(w.fd, d, ancestorMask)
		if err == nil || !errors.Is(err, unix.ENOENT) || d == filepath.Dir(d) {
			return wd, err
		}
	}
}

// swap sets *slot to wd and removes the watch it held, unless still in
// use (the kernel gives an inode watched again the same descriptor).
func (w *dirWatch) swap(slot *int, wd int) {
	old := *slot
	*slot = wd
	if old >= 0 && old != w.wd && old != w.anc {
		unix.InotifyRmWatch(w.fd, uint32(old)) // gone already when its dir is
	}
}

// stop ends the watch.
func (w *dirWatch) stop() { w.in.Close() }

// markArchives records the newest archive of dir as accounted for: the
// file followed is newer.
func (c *cli) markArchives(dir string) {
	if names, err := svclog.Archives(dir); err == nil && len(names) > 0 {
		c.seenArchive = names[len(names)-1]
	}
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
	// f is an archive now, or gone: what was written to it before the
	// rename, then the archives made after it, up to next. With no f
	// (nothing logged when following began), a first current that
	// rotated before this catch-up is such an archive too.
	err = nil
	if f != nil {
		err = c.drain(f)
		if err == nil {
			err = endLine(c.stdout, f)
		}
	}
	if err == nil {
		err = c.archivesAfter(path, f, next) // f still open: it is told by its inode
	}
	if f != nil {
		f.Close()
	}
	if err != nil {
		next.Close()
		return nil, err
	}
	return next, c.drain(next)
}

// archivesAfter copies, whole and in order, every archive of the log at
// path made after old (a current since rotated; nil when there was none)
// and before next (the current now, which may have become an archive
// meanwhile: it is read as next). When old is no archive (none, pruned,
// the oldest first; or removed or renamed away by someone), they are those
// newer than the last one accounted for.
func (c *cli) archivesAfter(path string, old, next *os.File) error {
	dir := filepath.Dir(path)
	names := archivesBefore(path, next)
	from := indexOf(dir, names, old) + 1
	if from > 0 {
		c.seenArchive = max(c.seenArchive, names[from-1])
	} else {
		for from < len(names) && names[from] <= c.seenArchive {
			from++
		}
	}
	for _, n := range names[from:] {
		a, err := svclog.OpenRead(filepath.Join(dir, n))
		if err != nil {
			continue // pruned meanwhile
		}
		c.seenArchive = max(c.seenArchive, n)
		_, err = io.Copy(c.stdout, a)
		if err == nil {
			err = endLine(c.stdout, a)
		}
		a.Close()
		if err != nil {
			return exitf(control.CodeFailed, "follow %s: %v", a.Name(), err)
		}
	}
	return nil
}

// archivesBefore lists the archives of the log at path made before cur,
// a current that may have been rotated meanwhile, oldest first. A listing
// owes nothing about entries made while it runs: if cur was rotated then,
// it may miss cur's archive and hold a newer one. So when cur is current
// no more after a listing, the dir is read again (its archive was there
// before that read began) and cut at cur's archive; one pruned at once
// (keep 0 or 1) leaves nothing known to be older.
func archivesBefore(path string, cur *os.File) []string {
	dir := filepath.Dir(path)
	cst, err := cur.Stat()
	if err != nil {
		return nil
	}
	for try := 0; try < 2; try++ {
		names, err := svclog.Archives(dir)
		if err != nil {
			return nil
		}
		if i := indexOf(dir, names, cur); i >= 0 {
			return names[:i]
		}
		if st, err := os.Stat(path); err == nil && os.SameFile(st, cst) {
			return names // cur is current still: all were made before it
		}
	}
	return nil
}

// indexOf is the index in names, archives of dir, of the one that is the
// open file f (nil: none), or -1.
func indexOf(dir string, names []string, f *os.File) int {
	if f == nil {
		return -1
	}
	fst, err := f.Stat()
	if err != nil {
		return -1
	}
	for i, n := range names {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && os.SameFile(st, fst) {
			return i
		}
	}
	return -1
}

// endLine ends, on w, a line f left unfinished: svclog ends a file mid-line
// only when a write failed, and what follows starts a line of its own.
func endLine(w io.Writer, f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil
	}
	b := []byte{0}
	if _, err := f.ReadAt(b, st.Size()-1); err != nil || b[0] == '\n' {
		return nil
	}
	_, err = w.Write([]byte{'\n'})
	return err
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
