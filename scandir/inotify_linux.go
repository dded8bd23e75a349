package scandir

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Masks of the two kinds of watches. Both refuse to follow a symlink and to
// watch anything but a directory, so a dir swapped for a symlink between our
// lstat and the watch can never make us watch the link's target.
const (
	// The scandir: service dirs appearing, leaving, or changing owner.
	rootMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
		unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
		unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK
	// A service dir: service.yaml and down coming and going, and
	// service.yaml changing owner or mode (the trust rule reads them).
	// IN_MODIFY is left out on purpose: a file is read once its writer
	// closes it.
	serviceMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB |
		unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
		unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK
)

// drainReads bounds how many reads one batch may take from the queue, so a
// writer that never stops cannot keep us from reporting.
const drainReads = 16

// rawEvent is one inotify event, with its name cut at the first NUL.
type rawEvent struct {
	wd   int32
	mask uint32
	name string
}

// inotify is a non-blocking inotify instance whose reads wait in the Go
// runtime's poller: a read deadline wakes it, nothing polls.
type inotify struct {
	f   *os.File
	rc  syscall.RawConn
	fd  int
	buf []byte
}

func openInotify() (*inotify, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("inotify syscall conn: %w", err)
	}
	return &inotify{f: f, rc: rc, fd: fd, buf: make([]byte, 64<<10)}, nil
}

func (in *inotify) close() error { return in.f.Close() }

// add watches path; for an inode already watched it returns the same wd.
func (in *inotify) add(path string, mask uint32) (int32, error) {
	wd, err := unix.InotifyAddWatch(in.fd, path, mask)
	if err != nil {
		return -1, fmt.Errorf("inotify_add_watch %s: %w", path, err)
	}
	return int32(wd), nil
}

// rm drops a watch. EINVAL means the kernel dropped it already (the dir was
// deleted), which is what we wanted.
func (in *inotify) rm(wd int32) {
	unix.InotifyRmWatch(in.fd, uint32(wd))
}

// setDeadline makes a waiting read return os.ErrDeadlineExceeded at t; the
// zero time means never.
func (in *inotify) setDeadline(t time.Time) error { return in.f.SetReadDeadline(t) }

// read waits for events, then takes whatever else is already queued without
// waiting, so a burst is handled as one batch.
func (in *inotify) read() ([]rawEvent, error) {
	n, err := in.readOnce(true)
	if err != nil {
		return nil, err
	}
	return in.readQueued(parseEvents(in.buf[:n], nil)), nil
}

// readQueued adds to evs what is already queued, without waiting, at most
// drainReads reads of it.
func (in *inotify) readQueued(evs []rawEvent) []rawEvent {
	for i := 0; i < drainReads; i++ {
		// An empty queue (EAGAIN) or any other error ends the batch; the
		// next waiting read reports the error again.
		n, err := in.readOnce(false)
		if err != nil {
			break
		}
		evs = parseEvents(in.buf[:n], evs)
	}
	return evs
}

// readOnce does one read(2) into buf. With wait it sleeps in the poller until
// the fd is readable, or its deadline; without, it reads at once, whatever
// the deadline (a Sync sets a past one to wake the loop, and it may land
// while a Sync's own read of the queue is under way: that read found
// nothing, and the Sync was answered before an overflow's marker was
// seen), and an empty queue is reported as EAGAIN.
func (in *inotify) readOnce(wait bool) (int, error) {
	var n int
	var rerr error
	var err error
	if wait {
		err = in.rc.Read(func(fd uintptr) bool {
			n, rerr = unix.Read(int(fd), in.buf)
			return rerr != unix.EAGAIN
		})
	} else {
		err = in.rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), in.buf) })
	}
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, fmt.Errorf("read inotify: %w", rerr)
	}
	if n < unix.SizeofInotifyEvent {
		return 0, fmt.Errorf("read inotify: short read of %d bytes", n)
	}
	return n, nil
}

// parseEvents appends the events packed in b to evs.
func parseEvents(b []byte, evs []rawEvent) []rawEvent {
	for len(b) >= unix.SizeofInotifyEvent {
		raw := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(raw.Len)
		if end > len(b) {
			break
		}
		name := b[unix.SizeofInotifyEvent:end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		evs = append(evs, rawEvent{wd: raw.Wd, mask: raw.Mask, name: string(name)})
		b = b[end:]
	}
	return evs
}
