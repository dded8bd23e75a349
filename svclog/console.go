package svclog

import (
	"io"
	"unicode/utf8"
)

// consoleWriter copies lines to the container's console as "[name] line",
// without a timestamp: docker logs adds its own.
type consoleWriter struct {
	w      io.Writer
	prefix string // "[name] "
}

// pipeBuf is PIPE_BUF: a write to a pipe of at most that many bytes is
// never mixed with another's.
const pipeBuf = 4096

// write writes each line in one Write of at most pipeBuf bytes, so that
// lines of services sharing the console never interleave, nor main's
// writes to the same pipe (docker's) land inside one; a longer line is
// cut, on a character's edge, into lines of that size, each with the
// prefix (its log file keeps it whole, up to the line limit).
func (c consoleWriter) write(ls []line) (int, error) {
	var buf []byte
	room := max(pipeBuf-len(c.prefix)-1, utf8.UTFMax)
	for i, l := range ls {
		text := l.text
		for {
			cut := len(text)
			if cut > room {
				cut = room
				for cut > room-utf8.UTFMax+1 && !utf8.RuneStart(text[cut]) {
					cut--
				}
			}
			buf = append(append(append(buf[:0], c.prefix...), text[:cut]...), '\n')
			if _, err := c.w.Write(buf); err != nil {
				return i, err
			}
			if text = text[cut:]; len(text) == 0 {
				break
			}
		}
	}
	return len(ls), nil
}

func (consoleWriter) close() {}
