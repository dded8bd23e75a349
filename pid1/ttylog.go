package pid1

import (
	"fmt"
	"io"
	"os"
	"syscall"
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
