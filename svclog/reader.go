package svclog

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
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

// readLines calls emit for each line read from r until EOF, a final
// unterminated line included. A line longer than MaxLine becomes several.
func readLines(r io.Reader, now func() time.Time, emit func(line)) error {
	br := bufio.NewReaderSize(r, MaxLine)
	split := false // the previous chunk was a MaxLine piece of a longer line
	for {
		chunk, err := br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		if len(chunk) > 0 && !(split && len(chunk) == 1 && chunk[0] == '\n') {
			text := bytes.Clone(bytes.TrimSuffix(chunk, []byte("\n")))
			emit(line{t: now(), text: text})
		}
		split = full
		switch {
		case err == nil || full:
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}

// drainLimit bounds what a forced stop still reads: about what a pipe holds.
const drainLimit = 64 << 10

// pipeReader reads the pipe through the netpoller. Once a deadline has
// stopped it (Close gave up waiting for the writers), it still returns what
// is already in the pipe, up to drainLimit, without waiting for more: the
// last lines written before the stop are not lost.
type pipeReader struct {
	f       *os.File
	drained int // bytes read after the stop
}

func (p *pipeReader) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return n, err
	}
	if p.drained >= drainLimit {
		return 0, io.EOF
	}
	rc, err := p.f.SyscallConn()
	if err != nil {
		return 0, io.EOF
	}
	b = b[:min(len(b), drainLimit-p.drained)]
	// Control, not Read: Read would refuse at once, past the deadline.
	rc.Control(func(fd uintptr) { n, err = unix.Read(int(fd), b) })
	if n <= 0 || err != nil {
		return 0, io.EOF
	}
	p.drained += n
	return n, nil
}
