package hsvc

import (
	"io"
	"os"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// escapingWriter writes a log's bytes to a terminal with what printable
// escapes escaped (ESC, \r, C1, bidirectional controls, invalid bytes),
// newlines and tabs kept: a service's output is its owner's to choose, and
// `hsvc logs` runs in root's terminal too, where an OSC sequence sets the
// title or the clipboard and a \r writes over the time stamp of a line. A
// character cut between two writes is held until the next.
type escapingWriter struct {
	w    io.Writer
	held []byte // the start of a character the next write ends
	buf  []byte
}

func (e *escapingWriter) Write(p []byte) (int, error) {
	b := p
	if len(e.held) > 0 {
		b = append(e.held, p...)
	}
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	e.buf = appendEscaped(e.buf[:0], b[:cut], true)
	e.held = append(e.held[:0:0], b[cut:]...) // never p's array: the caller reuses it
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes what is held, escaped: the log ended there.
func (e *escapingWriter) flush() error {
	if len(e.held) == 0 {
		return nil
	}
	_, err := e.w.Write(appendEscaped(nil, e.held, true))
	e.held = nil
	return err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
