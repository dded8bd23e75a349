package svclog

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// MaxLine is the longest line kept whole; longer ones are split into lines
// of MaxLine bytes.
const MaxLine = 16 << 10

// line is one line read from the pipe, without its newline.
type line struct {
	t    time.Time
	text []byte
	// dropped is how many lines an output's queue refused just before
	// this one, so the loss is reported where it happened.
	dropped uint64
}

// splitter cuts what the pipe gives into lines. Between reads it holds
// only an unfinished line, so an idle service costs no read buffer.
type splitter struct {
	now     func() time.Time
	emit    func(line)
	partial []byte // the start of a line whose newline has not come yet
	split   bool   // the current line was already emitted in MaxLine pieces
}

// feed takes the bytes of one read.
func (s *splitter) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.partial = append(s.partial, p...)
			s.cutLong()
			return
		}
		s.partial = append(s.partial, p[:i]...)
		s.cutLong()
		if len(s.partial) > 0 || !s.split {
			s.emit(line{t: s.now(), text: bytes.Clone(s.partial)})
		}
		s.partial, s.split = s.partial[:0], false
		p = p[i+1:]
	}
	if cap(s.partial) > 4<<10 && len(s.partial) == 0 {
		s.partial = nil // do not keep a large buffer for an idle service
	}
}

// cutLong emits MaxLine pieces of a line that is still growing.
func (s *splitter) cutLong() {
	for len(s.partial) >= MaxLine {
		s.emit(line{t: s.now(), text: bytes.Clone(s.partial[:MaxLine])})
		s.partial = append(s.partial[:0], s.partial[MaxLine:]...)
		s.split = true
	}
}

// flush emits a final line that never got its newline.
func (s *splitter) flush() {
	if len(s.partial) > 0 {
		s.emit(line{t: s.now(), text: bytes.Clone(s.partial)})
	}
	s.partial, s.split = nil, false
}

// readBufs lends read buffers to all Logs: a buffer is only needed for the
// moment a read runs, not while a Log waits for its service to say something.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// drainLimit bounds what a drain reads when the pipe cannot say how much
// it holds; drainMax bounds what it reads when it can (a pipe its writer
// enlarged with F_SETPIPE_SZ: up to 1 MiB for a user, more for root).
const (
	drainLimit = 64 << 10
	drainMax   = 16 << 20
)

// readPipe feeds s everything read from f until EOF. It waits in the
// netpoller without holding a buffer. At a read deadline it takes what is
// already in the pipe (drain), without waiting for more, and asks
// woken whether to go on: it stops when Close gave up waiting for the
// writers, and the last lines written before the stop are not lost.
func readPipe(f *os.File, s *splitter, woken func() bool) error {
	defer s.flush()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	for {
		var n int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, rerr = readInto(int(fd), s)
			return rerr != unix.EAGAIN
		})
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			drain(rc, s)
			if !woken() {
				return nil
			}
		case err != nil:
			return err
		case rerr == unix.EINTR:
		case rerr != nil:
			return rerr
		case n == 0:
			return nil // EOF: every writer is gone
		}
	}
}

// readInto does one read from fd with a borrowed buffer and feeds it to s.
func readInto(fd int, s *splitter) (int, error) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	n, err := unix.Read(fd, *bp)
	if n > 0 {
		s.feed((*bp)[:n])
	}
	return n, err
}

// drain reads what is already in the pipe, never waiting: what FIONREAD
// says it holds now (at most drainMax), else up to drainLimit. A fixed
// bound smaller than the pipe left the rest unread: an EndLine then ended
// a line in the middle of the stream, and a forced stop lost what was left
// uncounted.
func drain(rc interface{ Control(func(uintptr)) error }, s *splitter) {
	rc.Control(func(fd uintptr) {
		limit := drainLimit
		if n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil { // FIONREAD
			limit = min(max(n, 1), drainMax)
		}
		for total := 0; total < limit; {
			n, err := readInto(int(fd), s)
			if n <= 0 || err != nil {
				return
			}
			total += n
		}
	})
}
