package svclog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

func TestLinesArriveInOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "svc")
	var console bytes.Buffer
	l := newLog(t, Options{Dir: dir, Console: Serialize(&console)})
	sh(t, l.Writer(), `for i in $(seq 1 1000); do echo line $i; done`)
	closeLog(t, l)

	es := readEntries(t, l.Path())
	var want, wantConsole []string
	for i := 1; i <= 1000; i++ {
		want = append(want, fmt.Sprintf("line %d", i))
		wantConsole = append(wantConsole, fmt.Sprintf("[svc] line %d", i))
	}
	if !slices.Equal(texts(es), want) {
		t.Fatalf("file lines differ from what was written:\n%q", texts(es))
	}
	for i := 1; i < len(es); i++ {
		if es[i].t.Before(es[i-1].t) {
			t.Fatalf("timestamps go back at line %d: %v after %v", i+1, es[i].t, es[i-1].t)
		}
	}
	if got := strings.Split(strings.TrimSuffix(console.String(), "\n"), "\n"); !slices.Equal(got, wantConsole) {
		t.Fatalf("console lines differ from what was written:\n%q", got)
	}
	if l.Lost() != 0 {
		t.Fatalf("lost %d lines", l.Lost())
	}
}

func TestTimestampFormat(t *testing.T) {
	clock := newClock()
	dir := t.TempDir()
	l := newLog(t, Options{Dir: dir, Now: clock.Now})
	l.Writer().WriteString("hello\n")
	closeLog(t, l)
	b, _ := os.ReadFile(l.Path())
	if want := "2026-05-21T06:18:05.123456Z hello\n"; string(b) != want {
		t.Fatalf("got %q, want %q", b, want)
	}
}

func TestSplitting(t *testing.T) {
	long := strings.Repeat("a", MaxLine)
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"unterminated last line", "one\ntwo", []string{"one", "two"}},
		{"empty lines kept", "one\n\n\ntwo\n", []string{"one", "", "", "two"}},
		{"just under the limit", long[1:] + "\nb\n", []string{long[1:], "b"}},
		{"exactly the limit", long + "\nb\n", []string{long, "b"}},
		{"over the limit", long + "bc\nd\n", []string{long, "bc", "d"}},
		{"twice the limit", long + long + "\n", []string{long, long}},
		{"nothing", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var console bytes.Buffer
			l := newLog(t, Options{Name: "x", Console: Serialize(&console)})
			if _, err := l.Writer().WriteString(tc.input); err != nil {
				t.Fatal(err)
			}
			closeLog(t, l)
			var want string
			for _, w := range tc.want {
				// the console cuts lines into writes of PIPE_BUF (ASCII here)
				for room := pipeBuf - len("[x] \n"); len(w) > room; w = w[room:] {
					want += "[x] " + w[:room] + "\n"
				}
				want += "[x] " + w + "\n"
			}
			if console.String() != want {
				t.Fatalf("got %.200q, want %.200q", console.String(), want)
			}
		})
	}
}

// TestConsoleWritesFitPIPEBUF: a console copy is written PIPE_BUF bytes at
// most at a time, so that what main writes to the same pipe (docker's: main
// has the fd itself) never lands inside it, as it did inside a line of
// 12,005 bytes written at once; a longer line becomes lines of that size,
// each prefixed, cut between characters, that put together are the line.
func TestConsoleWritesFitPIPEBUF(t *testing.T) {
	var rec writeRecorder
	c := consoleWriter{w: &rec, prefix: "[big] "}
	long := strings.Repeat("é", 2000) + strings.Repeat("A", 8000) + "€" // 12,003 bytes, a cut inside é or €
	if n, err := c.write([]line{{text: []byte(long)}, {text: nil}, {text: []byte("short")}}); n != 3 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	var whole strings.Builder
	for i, w := range rec.writes {
		text, ok := strings.CutPrefix(w, "[big] ")
		if len(w) > pipeBuf || !ok || !strings.HasSuffix(text, "\n") || !utf8.ValidString(text) {
			t.Fatalf("write %d of %d bytes: %.40q...%.20q; want at most %d, prefixed, one line, whole characters", i, len(w), w, w[max(0, len(w)-20):], pipeBuf)
		}
		if i < len(rec.writes)-2 {
			whole.WriteString(strings.TrimSuffix(text, "\n"))
		}
	}
	if got := whole.String(); got != long || len(rec.writes) != 5 || rec.writes[3] != "[big] \n" || rec.writes[4] != "[big] short\n" {
		t.Errorf("%d writes; the long line put together equal: %v; want 3 pieces, then the empty and the short line", len(rec.writes), got == long)
	}
}

// writeRecorder records each Write.
type writeRecorder struct{ writes []string }

func (r *writeRecorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

// TestConsoleLinesDoNotInterleave: lines from several services sharing one
// console come out whole (lines short of PIPE_BUF: a longer one is cut,
// TestConsoleWritesFitPIPEBUF).
func TestConsoleLinesDoNotInterleave(t *testing.T) {
	cr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(cr)
		got <- b
	}()
	const services, lines, width = 8, 300, 4000
	logs := make([]*Log, services)
	for i := range logs {
		logs[i] = newLog(t, Options{Name: fmt.Sprint("s", i), Console: cw})
	}
	done := make(chan struct{})
	for _, l := range logs {
		go func() {
			produce(t, l.Writer(), lines, width)
			closeLog(t, l)
			done <- struct{}{}
		}()
	}
	for range logs {
		<-done
	}
	cw.Close()
	count, reported := 0, 0
	for _, ln := range strings.Split(strings.TrimSuffix(string(<-got), "\n"), "\n") {
		name, text, _ := strings.Cut(ln, " ")
		if n, ok := lostReport(text); ok && strings.HasPrefix(name, "[s") {
			reported += n
			continue
		}
		if !strings.HasPrefix(name, "[s") || len(text) != width || !strings.HasPrefix(text, "line ") {
			t.Fatalf("mangled console line %.80q", ln)
		}
		count++
	}
	if count+reported != services*lines || reported != int(lost(logs)) {
		t.Fatalf("%d lines on the console, %d reported lost, Lost %d, want %d in all", count, reported, lost(logs), services*lines)
	}
}

// lostReport parses "hinit: N lines lost (reason)".
func lostReport(text string) (int, bool) {
	var n int
	_, err := fmt.Sscanf(text, "hinit: %d lines lost (", &n)
	return n, err == nil
}

func lost(logs []*Log) (n uint64) {
	for _, l := range logs {
		n += l.Lost()
	}
	return n
}

// TestCloseWaitsForEveryWriter: the log ends when the last holder of the
// write end (here a grandchild outliving its parent) is gone; when ctx ends
// first, Close gives up and stops reading, after what is already in the pipe,
// and returns without the grandchild: nil when every output has what was
// read (the console, given up, may be done already), else ctx's error.
// (It wanted ctx's error alone, which a console done in time made a flake.)
func TestCloseWaitsForEveryWriter(t *testing.T) {
	var console bytes.Buffer
	l := newLog(t, Options{Name: "x", Console: Serialize(&console)})
	release, hold, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	cmd := exec.Command("/bin/sh", "-c", `(read x; echo grandchild done) <&3 & echo parent done`)
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = l.Writer(), l.Writer(), []*os.File{release}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	release.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	closed := make(chan error, 1)
	go func() { closed <- l.Close(ctx) }()
	select {
	case err := <-closed:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Close with a grandchild alive and ctx done: got %v, want nil or context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close with ctx done waited for the grandchild")
	}
	hold.WriteString("go\n")
	testprog.WaitFor(t, 5*time.Second, "the reader to stop", func() bool {
		select {
		case <-l.done:
			return true
		default:
			return false
		}
	})
	if !strings.HasPrefix(console.String(), "[x] parent done\n") {
		t.Fatalf("console: %q", console.String())
	}
}

// An instance's last line without its newline is written when EndLine says
// the instance has ended, not when the pipe closes (for a static service,
// at container shutdown), and it is never joined to the next instance's
// first line. Before, "fatal: bad config" waited in memory, and each
// instance's partial line was glued to the next one's under one timestamp.
func TestEndLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "svc")
	l := newLog(t, Options{Dir: dir})
	sh(t, l.Writer(), `printf 'fatal: bad config'`)
	l.EndLine()
	testprog.WaitFor(t, 5*time.Second, "the last line written before the log closes", func() bool {
		b, _ := os.ReadFile(l.Path())
		return strings.HasSuffix(string(b), " fatal: bad config\n")
	})
	sh(t, l.Writer(), `printf 'second'`)
	l.EndLine()
	l.EndLine() // nothing left to end: no empty line
	sh(t, l.Writer(), `echo third; printf 'last'`)
	closeLog(t, l)
	if got, want := texts(readEntries(t, l.Path())), []string{"fatal: bad config", "second", "third", "last"}; !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	l.EndLine() // after Close: returns at once
}

// gatedWriter blocks every Write until gate is closed.
type gatedWriter struct{ gate chan struct{} }

func (g gatedWriter) Write(p []byte) (int, error) {
	<-g.gate
	return len(p), nil
}

// fillBehindConsole writes n lines of width bytes (newline included) to
// l and waits until its reader waits on the full console.
func fillBehindConsole(t *testing.T, l *Log, n, width int) {
	t.Helper()
	console := l.outs[1]
	fmt.Fprint(l.Writer(), strings.Repeat(strings.Repeat("a", width-1)+"\n", n))
	testprog.WaitFor(t, 10*time.Second, "the reader to wait on the full console", func() bool {
		console.q.mu.Lock()
		defer console.q.mu.Unlock()
		return console.q.room != nil
	})
}

// TestEndLineWhileOutputFull: an instance's last line without its newline
// stays its own while the reader waits on a full console: EndLine lets the
// reader past the bound, so the flush is done before it returns and the next
// instance's first line is never joined to it. (Waiting, EndLine gave up
// after endLineWait and the file got "tailnext".) Nothing is lost.
func TestEndLineWhileOutputFull(t *testing.T) {
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = time.Hour // the console is slow here, not stalled
	g := gatedWriter{gate: make(chan struct{})}
	l := newLog(t, Options{Name: "x", Dir: t.TempDir(), Console: g})
	const width = 100
	lines := queueBytes/(width-1+lineOverhead) + 10 // the console's queue and a few more
	fillBehindConsole(t, l, lines, width)
	fmt.Fprint(l.Writer(), "tail")
	l.EndLine()
	fmt.Fprint(l.Writer(), "next\n")
	close(g.gate)
	closeLog(t, l)
	got := texts(readEntries(t, l.Path()))
	if n := len(got); n != lines+2 || got[n-2] != "tail" || got[n-1] != "next" || l.Lost() != 0 {
		t.Fatalf("%d lines ending %q, %d lost; want %d ending tail, next and none lost", n, got[max(0, n-2):], l.Lost(), lines+2)
	}
}

// TestRushesStayBounded: a console stuck for good and a service whose
// instances keep ending: every EndLine's rush lets lines past the bound,
// and they must not add up (27 MB after 200 ends, in review, before
// rushBytes).
func TestRushesStayBounded(t *testing.T) {
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = 50 * time.Millisecond
	g := gatedWriter{gate: make(chan struct{})}
	l := newLog(t, Options{Name: "x", Console: g})
	console := l.outs[0]
	chunk := strings.Repeat(strings.Repeat("b", 99)+"\n", 250) // 25 KB: within the pipe
	for range 200 {
		fmt.Fprint(l.Writer(), chunk)
		l.EndLine()
	}
	console.q.mu.Lock()
	size := console.q.size
	console.q.mu.Unlock()
	close(g.gate)
	closeLog(t, l)
	if size > rushBytes {
		t.Fatalf("the stuck console holds %d bytes after 200 ends, want at most %d", size, rushBytes)
	}
}

// TestStuckConsoleOfManyLogsStaysBounded: many services flooding a console
// that takes nothing hold, all together, the pool's limit and one line
// each, not each its own queue's bound (0.3 MB of PID 1 per service in
// review, 67 MB for 200 services). Their log files, in a pool of their
// own, get every line meanwhile. Every byte is given back to the pool once
// the console moves again.
func TestStuckConsoleOfManyLogsStaysBounded(t *testing.T) {
	defer func(d time.Duration, p *pool) { stallWait, consolePool = d, p }(stallWait, consolePool)
	stallWait = 20 * time.Millisecond
	consolePool = &pool{limit: 256 << 10} // one queue's own bound
	g := gatedWriter{gate: make(chan struct{})}
	open := sync.OnceFunc(func() { close(g.gate) })
	defer open() // a failure must not leave the logs' cleanup waiting on the console
	const n = 20
	chunk := strings.Repeat(strings.Repeat("c", 199)+"\n", 300) // 60 KB: within the pipe
	var logs []*Log
	for i := range n {
		l := newLog(t, Options{Name: fmt.Sprintf("s%d", i), Dir: t.TempDir(), Console: g})
		logs = append(logs, l)
		for range 8 {
			fmt.Fprint(l.Writer(), chunk)
		}
	}
	for _, l := range logs {
		testprog.WaitFor(t, 10*time.Second, "the reader to drop what the stuck console cannot take", func() bool {
			return l.Lost() > 0
		})
	}
	bound := consolePool.limit + n*int64(MaxLine+lineOverhead)
	if used := consolePool.used.Load(); used > bound || used < consolePool.limit-int64(MaxLine+lineOverhead) {
		t.Fatalf("%d services' stuck consoles hold %d bytes; want the pool full and at most %d", n, used, bound)
	}
	open()
	for _, l := range logs {
		closeLog(t, l)
		if n, lost := len(readEntries(t, l.Path())), l.outs[0].lost.Load(); n != 8*300 || lost != 0 {
			t.Errorf("%s: %d lines in the log file, %d lost; want %d, none lost", l.opts.Name, n, lost, 8*300)
		}
	}
	if used := consolePool.used.Load(); used != 0 {
		t.Fatalf("%d bytes still counted in the pool once every log is closed", used)
	}
}

// A service may enlarge its pipe (F_SETPIPE_SZ, 1 MiB for any user).
// EndLine's drain read a fixed 64 KiB of it and ended the line it stopped
// in: a line in the middle of the stream was cut in two, in the file and
// on the console (and a forced stop at the shutdown's deadline left the
// rest unread and uncounted). It reads what the pipe holds.
func TestEndLineDrainsAnEnlargedPipe(t *testing.T) {
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = time.Hour // the console is slow here, not stalled
	g := gatedWriter{gate: make(chan struct{})}
	l := newLog(t, Options{Name: "x", Dir: t.TempDir(), Console: g, MaxSize: 16 << 20})
	if _, err := unix.FcntlInt(l.Writer().Fd(), unix.F_SETPIPE_SZ, 1<<20); err != nil {
		t.Skipf("F_SETPIPE_SZ: %v", err)
	}
	const width = 100
	lines := (queueBytes + 700<<10) / width // more than the queue and 64 KiB, less than the queue and the pipe
	fillBehindConsole(t, l, lines, width)
	fmt.Fprint(l.Writer(), "tail")
	l.EndLine()
	close(g.gate)
	closeLog(t, l)
	got := texts(readEntries(t, l.Path()))
	for i, s := range got[:len(got)-1] {
		if len(s) != width-1 {
			t.Fatalf("line %d of %d is %d bytes, want %d: a line was cut", i, len(got), len(s), width-1)
		}
	}
	if n := len(got); n != lines+1 || got[n-1] != "tail" || l.Lost() != 0 {
		t.Fatalf("%d lines ending %q, %d lost; want %d ending tail and none lost", n, got[n-1], l.Lost(), lines+1)
	}
}
