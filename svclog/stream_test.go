package svclog

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// recordingGate blocks every Write until open is closed (a stderr whose
// reader stopped reading), then keeps what is written.
type recordingGate struct {
	open chan struct{}
	mu   sync.Mutex
	b    strings.Builder
}

func (g *recordingGate) Write(p []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Write(p)
}

// A Stream whose reader stops costs its writers one stall, not their
// life: Writes return, the lines refused are counted and reported ahead of
// the next one written once the reader reads again, and Close writes the
// rest. Before Stream, hinit wrote its lines to stderr under a lock, and a
// stderr nobody read blocked every goroutine that logged, the shutdown's.
func TestStreamStall(t *testing.T) {
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = 50 * time.Millisecond
	w := &recordingGate{open: make(chan struct{})}
	s := NewStream(w)
	const n = 5000 // ~800 KiB of queue cost: past queueBytes
	start := time.Now()
	for i := range n {
		fmt.Fprintf(s, "hinit: line %d %s\n", i, strings.Repeat("x", 80))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("%d Writes to a stalled stream took %v, want about one stall (50ms)", n, d)
	}
	close(w.open)
	testprog.WaitFor(t, 10*time.Second, "the stream to write what it holds", func() bool {
		s.o.q.mu.Lock()
		defer s.o.q.mu.Unlock()
		return s.o.q.size == 0
	})
	fmt.Fprintf(s, "hinit: the last line\n") // the reader reads again: it gets through
	if !s.Close(10 * time.Second) {
		t.Fatal("Close did not write everything within 10 s")
	}
	out := w.b.String()
	m := regexp.MustCompile(`(?m)^hinit: (\d+) lines lost \(queue full: output too slow\)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no loss report in the output (%d bytes)", len(out))
	}
	lines := strings.Count(out, "\n")
	var lost int
	fmt.Sscan(m[1], &lost)
	if lost == 0 || lines-1+lost != n+1 {
		t.Errorf("%d lines written, %d reported lost, 1 report: want %d in all", lines-1, lost, n+1)
	}
	if !strings.HasSuffix(out, "\n"+m[0]+"\nhinit: the last line\n") {
		t.Errorf("the output ends with %q, want the loss report, then the last line", out[max(0, len(out)-160):])
	}
}

// An unused Stream closes at once, and a Write of several lines is one
// Write of each.
func TestStreamLines(t *testing.T) {
	w := &recordingGate{open: make(chan struct{})}
	close(w.open)
	if !NewStream(w).Close(time.Nanosecond) {
		t.Error("Close of an unused stream: false")
	}
	s := NewStream(w)
	s.Write([]byte("a\nb\nc"))
	if !s.Close(5*time.Second) || w.b.String() != "a\nb\nc\n" {
		t.Errorf("wrote %q, want a, b and c, each a line", w.b.String())
	}
}

// A Write of nothing writes no line.
func TestStreamEmptyWrite(t *testing.T) {
	w := &recordingGate{open: make(chan struct{})}
	close(w.open)
	s := NewStream(w)
	s.Write([]byte("a\n"))
	s.Write(nil)
	s.Write([]byte("b\n"))
	if !s.Close(5*time.Second) || w.b.String() != "a\nb\n" {
		t.Errorf("wrote %q, want %q", w.b.String(), "a\nb\n")
	}
}
