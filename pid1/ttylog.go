package pid1

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"hinit/asuser"
)

// ttyLogMax is the size past which hinit.log (TTY mode) is moved to
// hinit.log.1, replacing the one before: the file lives in the runtime
// dir, on /run, a tmpfs whose pages are the container's memory, and hinit
// writes three lines for each restart of a crash-looping service for as
// long as the session lasts (an s6 dir restarted every second: 10 MB a
// day).
const ttyLogMax = 1 << 20

// ttyLog is hinit's log in TTY mode: hinit.log, kept at most ttyLogMax
// bytes, and the lines before them in hinit.log.1. The file is emptied in
// place, never replaced: handOver changes its group. Writes come one line
// (or one read of a boot hook's pipe) at a time, under lineHandler's lock.
type ttyLog struct {
	f    *os.File // hinit.log, opened O_APPEND
	path string
}

// Write appends one line, first moving what the file holds to hinit.log.1
// when the line would take it past ttyLogMax.
func (l *ttyLog) Write(p []byte) (int, error) {
	if fi, err := l.f.Stat(); err == nil && fi.Size() > 0 && fi.Size()+int64(len(p)) > ttyLogMax {
		if err := l.keepOld(fi); err != nil {
			// Not kept: hinit.log is emptied all the same, the
			// memory of /run matters more than old lines.
			fmt.Fprintf(l.f, "hinit: warning: hinit.log: %v; earlier lines dropped\n", err)
		}
	}
	return l.f.Write(p)
}

// keepOld copies hinit.log to hinit.log.1 (same owner and mode), at most
// ttyLogMax bytes of it, and empties hinit.log, whose appends then start
// again at 0. Only hinit writes to hinit.log, but a file grown past the
// bound all the same is not copied whole into /run's memory.
func (l *ttyLog) keepOld(fi os.FileInfo) error {
	defer l.f.Truncate(0)
	src, err := os.OpenFile(l.path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(l.path+".1", os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer dst.Close()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		dst.Chown(int(st.Uid), int(st.Gid)) // a hinit that is not root makes it its own already
	}
	if err := dst.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	if _, err := io.Copy(dst, io.LimitReader(src, min(fi.Size(), ttyLogMax))); err != nil {
		return err
	}
	return nil
}

// prevLogName is where a boot keeps the last boot's hinit.log (TTY mode),
// in the runtime dir. Docker keeps /run across docker restart, but each
// boot empties the runtime dir, and what hinit said while main had the
// terminal (a service's crashes, a stop that had to kill) was in that file
// alone: a docker kill, or a restart, lost it for good.
const prevLogName = "hinit.log.prev"

// readPreviousLog returns the last ttyLogMax bytes of the last boot's log
// in the runtime dir dir (hinit.log.1, then hinit.log), nil when there is
// none. It opens no symlink, FIFO or device.
func readPreviousLog(dir string) []byte {
	last := readTail(filepath.Join(dir, "hinit.log"), ttyLogMax)
	if room := ttyLogMax - len(last); room > 0 {
		last = append(readTail(filepath.Join(dir, "hinit.log.1"), room), last...)
	}
	if len(last) == 0 {
		return nil
	}
	return last
}

// readTail returns the last n bytes at most of the regular file path.
func readTail(path string, n int) []byte {
	f, err := asuser.OpenRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	b, err := io.ReadAll(io.NewSectionReader(f, max(0, fi.Size()-int64(n)), int64(n)))
	if err != nil {
		return nil
	}
	return b
}

// keepPreviousLog writes prev, the last boot's log, to prevLogName in the
// runtime dir dir just emptied, readable by root and the control group
// gid (none when < 0) only, as hinit.log is. It returns its path, "" when
// it could not be written.
func keepPreviousLog(dir string, prev []byte, gid int) (string, error) {
	path := filepath.Join(dir, prevLogName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if gid >= 0 {
		if err := f.Chown(0, gid); err != nil {
			return "", err
		}
		if err := f.Chmod(0o640); err != nil {
			return "", err
		}
	}
	if _, err := f.Write(prev); err != nil {
		return "", err
	}
	return path, nil
}
