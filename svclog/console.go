package svclog

import "io"

// consoleWriter copies lines to the container's console as "[name] line",
// without a timestamp: docker logs adds its own.
type consoleWriter struct {
	w      io.Writer
	prefix string // "[name] "
}

// write writes each line in one Write, so that lines of services sharing
// the console never interleave.
func (c consoleWriter) write(ls []line) (int, error) {
	var buf []byte
	for i, l := range ls {
		buf = append(append(append(buf[:0], c.prefix...), l.text...), '\n')
		if _, err := c.w.Write(buf); err != nil {
			return i, err
		}
	}
	return len(ls), nil
}

func (consoleWriter) close() {}
