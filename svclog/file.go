package svclog

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

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

// fileWriter writes lines to <dir>/current and rotates it. The dir is
// opened once, never through a symlink, and everything after that is
// relative to that descriptor (openat, renameat, unlinkat): whatever is
// renamed or swapped for a symlink on the way, rotation only ever touches
// the dir it opened. The path is looked up again at most once per
// retryEvery while lines flow; when it no longer names that dir (moved
// away, deleted), the dir is created again and writing goes on there.
//
// The dir is hermes' own, on a volume that may hang (NFS, FUSE): every
// system call on it runs on a thread that takes no signal meanwhile, in
// asuser.Do (open, rotation) or asuser.Quiet (the rest: write, the checks,
// close). A thread asleep in the kernel there would hold a SIGCHLD or a
// SIGTERM the kernel gave it, and hinit would not hear of it (asuser.Quiet).
type fileWriter struct {
	dir     string
	owner   asuser.ID
	maxSize int64
	keep    int
	now     func() time.Time
	log     *slog.Logger

	// Owned by the output's goroutine.
	d       *os.File  // the log dir, nil until opened
	dirID   fileID    // of d
	checkAt time.Time // no lookup of the path before this
	lastMsg string    // the last problem with the path that was logged
	rotMsg  string    // the last rotation failure logged, "" once one works
	f       *os.File  // current, nil until opened
	curID   fileID    // of f
	size    int64     // bytes in current
	partial bool      // a failed write left current mid-line
	retryAt time.Time // no open or rotation attempt before this
	err     error     // why the last open failed
	newest  string    // the newest archive's name in d, "" until a rotation read it
	kept    *names    // the keep newest archives of d, nil until a rotation listed d
	listed  int       // listings of d so far (rotate.go), for the tests
}

func newFileWriter(o Options, log *slog.Logger) *fileWriter {
	w := &fileWriter{dir: o.Dir, owner: o.Owner, maxSize: o.MaxSize, keep: o.Keep, now: o.Now, log: log}
	if w.maxSize <= 0 {
		w.maxSize = DefaultMaxSize
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
		var n int
		var err error
		asuser.Quiet(func() { n, err = w.f.Write(buf) })
		w.size += int64(n)
		if err != nil {
			whole, kept := 0, 0
			for whole < len(ends) && ends[whole] <= n {
				kept = ends[whole]
				whole++
			}
			if whole > 0 {
				w.partial = false // the file ends with a whole line, or with...
			}
			if cut := int64(n - kept); cut > 0 && !w.takeBack(cut) {
				w.partial = true // ...a line cut short: the next starts on its own
			}
			if errors.Is(err, unix.ENOSPC) && w.makeRoom() {
				done += whole
				continue
			}
			return done + whole, err // "write <path>: <errno>"
		}
		w.partial = false
		done += len(ends)
	}
	return done, nil
}

// takeBack truncates the last cut bytes of current, a line a full disk cut
// short, so that no fragment of it stays in the file, and reports whether
// it did: only when the file is as hinit left it (its owner may have
// emptied it or appended to it meanwhile: a cut by hinit's count would pad
// it with zeros, or take their lines). w.size follows the file.
func (w *fileWriter) takeBack(cut int64) bool {
	var st unix.Stat_t
	done := false
	asuser.Quiet(func() {
		if unix.Fstat(int(w.f.Fd()), &st) != nil {
			return
		}
		if st.Size == w.size && w.f.Truncate(st.Size-cut) == nil {
			st.Size -= cut
			done = true
		}
		w.size = st.Size
	})
	return done
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
	if w.f != nil {
		asuser.Quiet(func() {
			if !w.now().Before(w.checkAt) || w.unlinked() {
				w.recheck()
			}
		})
	}
	if w.f == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	if w.size > 0 && w.size+n > w.maxSize && w.due() {
		if err := w.rotate(); err != nil {
			w.failed(err)
			// Once, not at each retry (every second, for each service
			// whose dir was made read-only): current grows meanwhile.
			if msg := err.Error(); msg != w.rotMsg {
				w.rotMsg = msg
				w.log.Warn("log rotation failed: current grows past max_size until it works", "err", err)
			}
			if w.f == nil {
				return w.err
			}
		} else if w.rotMsg != "" {
			w.rotMsg = ""
			w.log.Info("log rotation works again", "dir", w.dir)
		}
	}
	return nil
}

// open creates the dir and opens it and current, as the owner.
func (w *fileWriter) open() error {
	if !w.due() {
		return w.err
	}
	err := asuser.Do(w.owner, func() error {
		d, err := asuser.OpenDir(w.dir, true, dirPerm)
		if err != nil {
			return err
		}
		w.closeDir()
		w.d, w.newest, w.kept = d, "", nil
		w.dirID, err = statID(d)
		if err != nil {
			return err
		}
		return w.openCurrent()
	})
	if err != nil {
		w.failed(fmt.Errorf("open log: %w", err))
		return w.err
	}
	w.checkAt = w.now().Add(retryEvery)
	return nil
}

// recheck looks the path up again (a read-only walk that never follows a
// symlink: no need for the owner's rights) and, when it no longer names the
// dir being written, reopens: a fresh dir is created where the old one was.
// A path that cannot be looked up (a symlink now stands there) leaves the
// writer in the dir it has, said once, while the file it writes is there:
// once that file was removed (the dir removed, then a symlink or a file
// put at its path), lines are lost, counted with the path's error, until
// the path can be opened again. In the same dir, a current that is
// no longer the file being written (removed or renamed by its owner, a
// cleanup tool) is opened anew: lines written since went into that file.
func (w *fileWriter) recheck() {
	w.checkAt = w.now().Add(retryEvery)
	d, err := asuser.OpenDir(w.dir, false, 0)
	var id fileID
	if err == nil {
		id, err = statID(d)
		d.Close()
	}
	switch {
	case err == nil && id == w.dirID:
		w.lastMsg = ""
		if !w.currentInPlace() {
			w.log.Info("log file was removed or renamed: writing to a new one", "file", filepath.Join(w.dir, currentName))
			w.closeCurrent()
		}
	case err == nil || errors.Is(err, fs.ErrNotExist):
		w.log.Info("log dir was moved away or replaced: writing to a new one", "dir", w.dir)
		w.close()
		w.lastMsg = ""
	case w.unlinked():
		// Lines written on would go into a removed file, unseen.
		w.closeCurrent()
		w.lastMsg = ""
	default:
		if msg := err.Error(); msg != w.lastMsg {
			w.lastMsg = msg
			w.log.Warn("log dir path cannot be used; writing on in the dir opened before", "err", err)
		}
	}
}

// unlinked reports whether the file being written was removed: one fstat
// of the descriptor held, per write, so that no line goes into a removed
// file (a rename is seen at the next recheck; its lines are in the file).
func (w *fileWriter) unlinked() bool {
	var st unix.Stat_t
	return unix.Fstat(int(w.f.Fd()), &st) == nil && st.Nlink == 0
}

// currentInPlace reports whether <dir>/current is still the file being
// written.
func (w *fileWriter) currentInPlace() bool {
	var st unix.Stat_t
	if err := unix.Fstatat(int(w.d.Fd()), currentName, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false
	}
	return fileID{st.Dev, st.Ino} == w.curID
}

// fileID identifies a file for as long as it exists.
type fileID struct{ dev, ino uint64 }

func statID(f *os.File) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	return fileID{st.Dev, st.Ino}, nil
}

// due reports whether an open or rotation may be attempted.
func (w *fileWriter) due() bool { return !w.now().Before(w.retryAt) }

// failed records a failed open or rotation and puts off the next attempt.
func (w *fileWriter) failed(err error) {
	w.err = err
	w.retryAt = w.now().Add(retryEvery)
}

// openCurrent opens current for appending, relative to the dir; it runs as
// the owner. A FIFO, a symlink or a file with other hard links planted as
// current is refused: root must not write into someone else's file. A
// current that ends mid-line (an earlier boot's write cut short by a full
// disk or a kill) gets its newline before the next line: it is opened for
// reading too, to see its last byte, or for writing only when its owner
// made it so.
func (w *fileWriter) openCurrent() error {
	return w.openCurrentOnce(true)
}

// openCurrentOnce is openCurrent; mayMove lets it set aside, once, a
// current root did not write (rootsFile).
func (w *fileWriter) openCurrentOnce(mayMove bool) error {
	path := filepath.Join(w.dir, currentName)
	dfd := int(w.d.Fd())
	// Root's lines in a dir another user owns: a setgid dir gives a new
	// file that user's group, a default ACL that user's read. It is made
	// 0600, made root's alone (its group the writer's, no access ACL), and
	// only then 0640: a descriptor that user opened meanwhile would read on
	// for good. A dir root owns is the operator's (a log readers' group).
	guard := false
	if w.rootWriter() {
		var dst unix.Stat_t
		guard = unix.Fstat(dfd, &dst) != nil || dst.Uid != 0
	}
	perm := uint32(filePerm)
	if guard {
		perm = 0o600
	}
	flags := unix.O_APPEND | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	open := func(extra int) (int, error) {
		fd, err := unix.Openat(dfd, currentName, unix.O_RDWR|flags|extra, perm)
		if err == unix.EACCES {
			fd, err = unix.Openat(dfd, currentName, unix.O_WRONLY|flags|extra, perm)
		}
		return fd, err
	}
	fd, err := open(unix.O_CREAT | unix.O_EXCL)
	created := err == nil
	if err == unix.EEXIST {
		fd, err = open(0)
	}
	if err == unix.ELOOP {
		err = asuser.ErrSymlink
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		f.Close()
		return fmt.Errorf("open %s: not a regular file with one link (mode %o, %d links): refused", path, st.Mode, st.Nlink)
	}
	if !created && !w.rootsFile(&st) {
		// A root service's log in a dir another user owns: that user may
		// have put its own file there, to read what root's service
		// writes. Set aside as an archive, and a new current made (which
		// root makes, whoever the filesystem says owns it: NFS's
		// root_squash). Nothing is lost.
		f.Close()
		if !mayMove {
			return fmt.Errorf("open %s: a file of uid %d, not root's: refused", path, st.Uid)
		}
		archive := archiveName(dfd, w.now(), w.newest)
		if err := unix.Renameat(dfd, currentName, dfd, archive); err != nil {
			return fmt.Errorf("set aside %s, a file of uid %d, not root's: %w", path, st.Uid, err)
		}
		w.newest = archive
		if err := w.pruneKept(archive); err != nil { // a dir listed now: keep holds
			w.log.Warn("log archive cleanup failed", "err", err)
		}
		w.log.Warn("log file not root's: set aside, a new one made", "file", path, "uid", st.Uid, "archive", archive)
		return w.openCurrentOnce(false)
	}
	if guard { // see perm above
		if st.Gid != uint32(w.owner.GID) {
			unix.Fchown(fd, 0, w.owner.GID)
		}
		unix.Fremovexattr(fd, "system.posix_acl_access") // ENODATA: none
		switch {
		case created:
			unix.Fchmod(fd, filePerm)
		case st.Mode&^filePerm&0o7777 != 0:
			unix.Fchmod(fd, st.Mode&filePerm)
		}
	}
	partial := false
	if st.Size > 0 {
		var last [1]byte
		n, _ := unix.Pread(fd, last[:], st.Size-1) // EBADF when opened for writing only
		partial = n == 1 && last[0] != '\n'
	}
	w.f, w.curID, w.size, w.partial = f, fileID{st.Dev, st.Ino}, st.Size, partial
	return nil
}

// rootsFile reports whether st, a current found in place, may take what
// the writer writes: any file for a writer that is not root (the file is
// the writer's own, or its dir's owner's, who could read it anyway), only
// root's for root.
func (w *fileWriter) rootsFile(st *unix.Stat_t) bool {
	return !w.rootWriter() || st.Uid == 0
}

// rootWriter reports whether the lines written are a root service's.
func (w *fileWriter) rootWriter() bool {
	return unix.Geteuid() == 0 && w.owner.UID == 0
}

// close closes current and the dir, when the output finishes.
func (w *fileWriter) close() {
	asuser.Quiet(func() {
		w.closeCurrent()
		w.closeDir()
	})
}

func (w *fileWriter) closeCurrent() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

func (w *fileWriter) closeDir() {
	if w.d != nil {
		w.d.Close()
		w.d = nil
	}
}
