package svclog

import (
	"bytes"
	"io"
	"log/slog"
	"sync/atomic"
	"time"
)

// Stream is an output of whole lines that a reader who stops reading
// cannot hold for long: hinit's own log on its stderr, a pipe that docker
// reads and its log driver may stop draining. Lines are queued as a
// service's console copies are (see the package comment): a burst waits
// while the output moves, an output that makes no room for a second
// stalls, and lines are then refused at once, counted, and reported ahead
// of the next line written:
//
//	hinit: N lines lost (queue full: output too slow)
//
// So a writer waits at most that second, once per stall. An idle Stream
// runs no goroutine.
type Stream struct {
	o    *output
	used atomic.Bool // a line was ever written
}

// NewStream writes to w, one Write per line.
func NewStream(w io.Writer) *Stream {
	return &Stream{o: newOutput("stderr", consoleWriter{w: w}, nil, slog.New(slog.DiscardHandler))}
}

// Write queues the lines of p; a last line without a newline is a line.
func (s *Stream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.used.Store(true)
	now := time.Now()
	for _, l := range bytes.Split(bytes.TrimSuffix(p, []byte{'\n'}), []byte{'\n'}) {
		s.o.push(line{t: now, text: bytes.Clone(l)})
	}
	return len(p), nil
}

// Close writes what is queued, for at most within; lines written after it
// are dropped. It reports whether everything was written.
func (s *Stream) Close(within time.Duration) bool {
	if !s.used.Load() {
		return true // nothing to write: no goroutine, no timer
	}
	s.o.finish()
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-s.o.done:
		return true
	case <-t.C:
		return false
	}
}
