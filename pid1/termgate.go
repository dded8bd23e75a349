package pid1

import (
	"fmt"
	"io"
	"sync"
)

// termGate keeps one of hinit's output streams (stderr for hinit's own
// lines, stdout for the services' console copies) off the terminal while
// main holds the terminal's foreground (SPEC §2, §7): nothing but main
// writes to the screen a TUI is drawing. A stream that is not a terminal
// (docker logs' pipe, a file) is never held back.
//
// While held, writes are kept (the first keepMax of them, counting the
// rest) when keep is set, else dropped: the services' copies are in their
// log files anyway. release writes what was kept and lets writes through
// again: hinit releases its own lines once main is gone (the terminal is
// nobody's then), never the console copies (SPEC §2: suppressed in TTY
// mode, shutdown's lines included).
type termGate struct {
	mu    sync.Mutex // guards everything below, and serializes writes to out
	out   io.Writer
	tty   bool // out is a terminal
	held  bool
	keep  bool
	kept  [][]byte
	extra int // writes dropped beyond keepMax while held
}

const keepMax = 100

// newGate wraps out, a terminal when tty. keep says whether held writes
// are kept for release.
func newGate(out io.Writer, tty, keep bool) *termGate {
	return &termGate{out: out, tty: tty, keep: keep}
}

// hold starts holding writes back, when out is a terminal.
func (g *termGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = g.tty
}

// release lets writes through again, after those that were kept.
func (g *termGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.held {
		return
	}
	g.held = false
	for _, b := range g.kept {
		g.out.Write(b)
	}
	if g.extra > 0 {
		fmt.Fprintf(g.out, "hinit: %d more lines were held back while main had the terminal\n", g.extra)
	}
	g.kept, g.extra = nil, 0
}

func (g *termGate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.held {
		return g.out.Write(p)
	}
	switch {
	case !g.keep:
	case len(g.kept) < keepMax:
		g.kept = append(g.kept, append([]byte(nil), p...))
	default:
		g.extra++
	}
	return len(p), nil
}
