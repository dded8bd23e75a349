package hsvc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
	"hinit/svclog"
)

// logServer serves a fixed status whose service "dash" logs to
// dir/current, and returns the socket and the log path.
func logServer(t *testing.T) (sock, logPath string) {
	t.Helper()
	dir := t.TempDir()
	logPath = filepath.Join(dir, "current")
	h := fixedStatus([]control.Status{
		{Name: "dash", State: "up", LogPath: logPath},
		{Name: "quiet", State: "up"},
	})
	return serve(t, h), logPath
}

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "2026-05-21T06:18:05Z line %d\n", i)
	}
	return b.String()
}

func TestLogsTail(t *testing.T) {
	sock, logPath := logServer(t)
	tests := []struct {
		name    string
		content *string // nil: no file
		args    []string
		code    int
		want    string
		errPart string
	}{
		{"default 20", ptr(numbered(1, 30)), []string{"logs", "dash"}, 0, numbered(11, 30), ""},
		{"n 3", ptr(numbered(1, 30)), []string{"logs", "dash", "-n", "3"}, 0, numbered(28, 30), ""},
		{"n 0", ptr(numbered(1, 30)), []string{"logs", "-n", "0", "dash"}, 0, "", ""},
		{"more than there is", ptr(numbered(1, 2)), []string{"logs", "dash", "-n", "5"}, 0, numbered(1, 2), ""},
		{"no final newline", ptr("a\nb\nc"), []string{"logs", "dash", "-n", "2"}, 0, "b\nc", ""},
		{"empty", ptr(""), []string{"logs", "dash"}, 0, "", ""},
		{"no file yet", nil, []string{"logs", "dash"}, 1, "", "no log at " + logPath + " yet"},
		{"console only", nil, []string{"logs", "quiet"}, 1, "", "quiet has no log file"},
		{"unknown", nil, []string{"logs", "nope"}, 3, "", "no such service"},
		{"two names", nil, []string{"logs", "dash", "quiet"}, 2, "", "exactly one"},
		{"negative n", nil, []string{"logs", "dash", "-n", "-1"}, 2, "", "must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(logPath)
			if tc.content != nil {
				if err := os.WriteFile(logPath, []byte(*tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, stdout, stderr := newCLI(context.Background(), sock)
			code := c.run(tc.args)
			checkRun(t, code, stdout.String(), stderr.String(), tc.code, "", tc.errPart)
			if code == 0 && stdout.String() != tc.want {
				t.Fatalf("stdout %q, want %q", stdout, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestLastLines(t *testing.T) {
	long := strings.Repeat("x", 3*tailBlock) + "\n"
	tests := []struct {
		name    string
		content string
		n       int
		want    int64
		lines   int // found from want on
	}{
		{"empty", "", 5, 0, 0},
		{"one line", "a\n", 1, 0, 1},
		{"last of two", "a\nb\n", 1, 2, 1},
		{"blank lines count", "a\n\n\n", 2, 2, 2},
		{"lines across blocks", long + long + "tail\n", 2, int64(len(long)), 2},
		{"zero", "a\nb\n", 0, 4, 0},
		{"fewer than asked", "a\nb\n", 5, 0, 2},
		{"fewer, no final newline", "a\nb", 5, 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, lines, err := lastLines(strings.NewReader(tc.content), int64(len(tc.content)), tc.n)
			if err != nil || got != tc.want || lines != tc.lines {
				t.Fatalf("lastLines = %d, %d lines, %v; want %d, %d lines", got, lines, err, tc.want, tc.lines)
			}
		})
	}
}

// TestLogsFollow follows a log through appends, a rotation (current
// renamed away, a new current created) and a truncation.
func TestLogsFollow(t *testing.T) {
	sock, logPath := logServer(t)
	if err := os.WriteFile(logPath, []byte(numbered(1, 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, stdout, stderr := newCLI(ctx, sock)
	done := make(chan int, 1)
	go func() { done <- c.run([]string{"logs", "dash", "-f", "-n", "2"}) }()
	expect := numbered(4, 5)
	testprog.WaitFor(t, 5*time.Second, "the last 2 lines", func() bool { return stdout.String() == expect })

	appendTo(t, logPath, numbered(6, 7))
	expect += numbered(6, 7)
	testprog.WaitFor(t, 5*time.Second, "appended lines", func() bool { return stdout.String() == expect })

	appendTo(t, logPath, numbered(8, 8))
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, logPath+".1", numbered(9, 9)) // the writer had not closed it yet
	appendTo(t, logPath, numbered(10, 11))
	expect += numbered(8, 11)
	testprog.WaitFor(t, 5*time.Second, "lines across the rotation", func() bool { return stdout.String() == expect })

	if err := os.Truncate(logPath, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(t, logPath, numbered(12, 12))
	expect += numbered(12, 12)
	testprog.WaitFor(t, 5*time.Second, "lines after truncation", func() bool { return stdout.String() == expect })

	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := stdout.String(); got != expect {
		t.Fatalf("output after the end:\n%s\nwant:\n%s", got, expect)
	}
}

// TestLogsFollowBeforeFirstLine: following a service that has not logged
// yet waits for its file.
func TestLogsFollowBeforeFirstLine(t *testing.T) {
	sock, logPath := logServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, stdout, _ := newCLI(ctx, sock)
	done := make(chan int, 1)
	go func() { done <- c.run([]string{"logs", "dash", "-f"}) }()
	// The watch may begin before or after the file appears: both must work.
	appendTo(t, logPath, numbered(1, 1))
	testprog.WaitFor(t, 5*time.Second, "the first line", func() bool { return stdout.String() == numbered(1, 1) })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// slowTerminal is hsvc's stdout on a slow terminal: its Write number
// blockAt waits until gate is closed.
type slowTerminal struct {
	testprog.Buffer
	writes  atomic.Int32
	blockAt int32
	gate    chan struct{}
}

func (s *slowTerminal) Write(p []byte) (int, error) {
	if s.writes.Add(1) == s.blockAt {
		<-s.gate
	}
	return s.Buffer.Write(p)
}

// TestLogsFollowThroughRotations: hsvc logs -f follows across rotations,
// several of them while hsvc is busy printing (a slow terminal, a burst)
// included: every archive made meanwhile is shown, in order. Before, hsvc
// finished the file it had and jumped to the current one.
func TestLogsFollowThroughRotations(t *testing.T) {
	sock, logPath := logServer(t)
	// One line per file: every line after the first rotates.
	l, err := svclog.New(svclog.Options{Name: "dash", Dir: filepath.Dir(logPath), MaxSize: 60, Keep: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	inFile := func(s string) func() bool {
		return func() bool { b, _ := os.ReadFile(logPath); return strings.Contains(string(b), s) }
	}
	fmt.Fprintln(l.Writer(), "line 0")
	testprog.WaitFor(t, 5*time.Second, "line 0 in current", inFile("line 0"))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &slowTerminal{blockAt: 2, gate: make(chan struct{})}
	c, _, stderr := newCLI(ctx, sock)
	c.stdout = out
	done := make(chan int, 1)
	go func() { done <- c.run([]string{"logs", "dash", "-f", "-n", "1"}) }()
	testprog.WaitFor(t, 5*time.Second, "the tail", func() bool { return strings.Contains(out.String(), "line 0") })

	fmt.Fprintln(l.Writer(), "line 1")
	testprog.WaitFor(t, 5*time.Second, "hsvc printing line 1", func() bool { return out.writes.Load() == 2 })
	for i := 2; i <= 4; i++ { // three more rotations while hsvc prints
		fmt.Fprintf(l.Writer(), "line %d\n", i)
		testprog.WaitFor(t, 5*time.Second, "the line in current", inFile(fmt.Sprintf("line %d", i)))
	}
	close(out.gate)
	testprog.WaitFor(t, 5*time.Second, "line 4 followed", func() bool { return strings.Contains(out.String(), "line 4") })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for i := 0; i <= 4; i++ {
		if !strings.Contains(out.String(), fmt.Sprintf(" line %d\n", i)) {
			t.Errorf("line %d never printed", i)
		}
	}
	if t.Failed() {
		t.Logf("hsvc logs -f printed:\n%s", out.String())
	}
}

// TestLogsTailAcrossRotation: `hsvc logs NAME -n 5` prints the last 5
// lines of the service's log, those in the newest archives when current
// holds fewer: right after a rotation it held only the newest line, and the
// four before it were not printed.
func TestLogsTailAcrossRotation(t *testing.T) {
	sock, logPath := logServer(t)
	// About 3 lines per file at this size: lines 1-6 rotate twice.
	l, err := svclog.New(svclog.Options{Name: "dash", Dir: filepath.Dir(logPath), MaxSize: 120, Keep: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(l.Writer(), "line %d\n", i)
	}
	testprog.WaitFor(t, 5*time.Second, "line 7 in current", func() bool {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), "line 7")
	})
	c, stdout, stderr := newCLI(context.Background(), sock)
	if code := c.run([]string{"logs", "dash", "-n", "5"}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for i := 3; i <= 7; i++ {
		if !strings.Contains(stdout.String(), fmt.Sprintf(" line %d\n", i)) {
			t.Errorf("line %d missing from hsvc logs -n 5:\n%s", i, stdout)
		}
	}
}

const (
	arcA = "@20260101T000000.000000Z.s"
	arcB = "@20260101T000001.000000Z.s"
	arcC = "@20260101T000002.000000Z.s"
)

func writeLogFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A rotation between showLog's open of current and tail's listing of the
// archives makes the file opened the newest archive: its lines are printed
// once, as current's. They were printed twice.
func TestLogsTailRotationAfterOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	writeLogFile(t, filepath.Join(dir, arcA), "a1\na2\n")
	writeLogFile(t, path, "c1\n")
	f, err := os.Open(path) // showLog's openLog
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// svclog rotates now: current → archive, a new current
	if err := os.Rename(path, filepath.Join(dir, arcB)); err != nil {
		t.Fatal(err)
	}
	writeLogFile(t, path, "")
	var out strings.Builder
	if err := tail(path, f, 5, &out); err != nil {
		t.Fatal(err)
	}
	if want := "a1\na2\nc1\n"; out.String() != want {
		t.Fatalf("hsvc logs -n 5 printed %q, want %q", out.String(), want)
	}
}

// An archive that ends mid-line (a write that failed on a full disk left
// current mid-line, then it rotated) gets its line ended: tail joined its
// last line with the first line printed after it.
func TestLogsTailArchiveWithoutNewline(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	writeLogFile(t, filepath.Join(dir, arcA), "a1\na2")
	writeLogFile(t, path, "c1\n")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	if err := tail(path, f, 3, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "\n") != 3 {
		t.Fatalf("hsvc logs -n 3 printed %q: %d lines, want 3 (a1, a2, c1)", out.String(), strings.Count(out.String(), "\n"))
	}
}

// current removed (rm current, a cleanup tool): svclog opens a new one,
// and hsvc logs -f goes on with it, printing no archive (all are older
// than what it printed). It printed every archive of the dir first.
func TestLogsFollowCurrentRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	writeLogFile(t, filepath.Join(dir, arcA), "old1\n")
	writeLogFile(t, filepath.Join(dir, arcB), "old2\n")
	writeLogFile(t, path, "x1\n")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil { // tail printed x1
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	writeLogFile(t, path, "y1\n")
	c, stdout, _ := newCLI(context.Background(), "")
	c.markArchives(dir) // as showLog does before it opens current
	next, err := c.catchUp(path, f)
	if err != nil {
		t.Fatal(err)
	}
	next.Close()
	if want := "y1\n"; stdout.String() != want {
		t.Fatalf("hsvc logs -f printed %q after current was removed, want %q", stdout.String(), want)
	}
}

// sleepyTerminal is a slow terminal: each Write takes 200 µs.
type sleepyTerminal struct {
	testprog.Buffer
}

func (s *sleepyTerminal) Write(p []byte) (int, error) {
	time.Sleep(200 * time.Microsecond)
	return s.Buffer.Write(p)
}

// A log that rotates after every line (as svclog does: append, rename
// current to the next archive name, a new current), followed by hsvc logs
// -f's catch-ups on a slow terminal: each line is printed once. A rotation
// between catchUp's open of the new current (next) and the listing of the
// archives makes next an archive made after the old file: it is read as
// next only (it was printed twice).
func TestLogsFollowRotationRace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	writeLogFile(t, path, "")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	done := make(chan struct{})
	go func() {
		defer close(done)
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 1; i <= n; i++ {
			appendTo(t, path, fmt.Sprintf("line %d\n", i))
			arc := base.Add(time.Duration(i) * time.Microsecond).Format("@20060102T150405.000000Z.s")
			if err := os.Rename(path, filepath.Join(dir, arc)); err != nil {
				t.Error(err)
				return
			}
			writeLogFile(t, path, "")
		}
	}()
	out := &sleepyTerminal{}
	c, _, _ := newCLI(context.Background(), "")
	c.stdout = out
	for running := true; running; { // follow's loop, an event each time
		select {
		case <-done:
			running = false
		default:
		}
		if f, err = c.catchUp(path, f); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		seen[l]++
	}
	dups := 0
	for l, k := range seen {
		if k > 1 {
			if dups++; dups < 5 {
				t.Errorf("%q printed %d times", l, k)
			}
		}
	}
	if len(seen) != n || dups > 0 {
		t.Errorf("%d distinct lines of %d, %d printed more than once", len(seen), n, dups)
	}
}

// Two rotations between showLog's open of current and tail's listing: only
// the archives older than the file opened are read for the lines before it
// (the one made after it was printed as if older).
func TestLogsTailTwoRotationsAfterOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	writeLogFile(t, filepath.Join(dir, arcA), "a1\na2\n")
	writeLogFile(t, path, "c1\n")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Rename(path, filepath.Join(dir, arcB)); err != nil {
		t.Fatal(err)
	}
	writeLogFile(t, path, "d1\n")
	if err := os.Rename(path, filepath.Join(dir, arcC)); err != nil {
		t.Fatal(err)
	}
	writeLogFile(t, path, "")
	var out strings.Builder
	if err := tail(path, f, 5, &out); err != nil {
		t.Fatal(err)
	}
	if want := "a1\na2\nc1\n"; out.String() != want {
		t.Fatalf("hsvc logs -n 5 printed %q, want %q", out.String(), want)
	}
}

// ... and hsvc logs -f prints that archive once, after the file opened.
func TestLogsFollowTwoRotationsAfterOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	writeLogFile(t, filepath.Join(dir, arcA), "a1\n")
	writeLogFile(t, path, "c1\n")
	c, stdout, _ := newCLI(context.Background(), "")
	c.markArchives(dir) // showLog, before it opens current
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, filepath.Join(dir, arcB)); err != nil {
		t.Fatal(err)
	}
	writeLogFile(t, path, "d1\n")
	if err := os.Rename(path, filepath.Join(dir, arcC)); err != nil {
		t.Fatal(err)
	}
	writeLogFile(t, path, "e1\n")
	if err := tail(path, f, 3, stdout); err != nil { // showLog, -n 3
		t.Fatal(err)
	}
	next, err := c.catchUp(path, f)
	if err != nil {
		t.Fatal(err)
	}
	next.Close()
	if want := "a1\nc1\nd1\ne1\n"; stdout.String() != want {
		t.Fatalf("hsvc logs -f -n 3 printed %q, want %q", stdout.String(), want)
	}
}

// keep 1: two rotations between showLog's open and follow's start, the
// first archive (the file opened) pruned: the archive after it is printed.
// The archives were marked at follow's start, which took it as printed.
func TestLogsFollowKeep1TwoRotations(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	writeLogFile(t, path, "c1\n")
	c, stdout, _ := newCLI(context.Background(), "")
	c.markArchives(dir) // showLog, before it opens current
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tail(path, f, 1, stdout); err != nil {
		t.Fatal(err)
	}
	// rotation 1 (c1 → arcA), rotation 2 (d1 → arcB, arcA pruned: keep 1)
	if err := os.Rename(path, filepath.Join(dir, arcA)); err != nil {
		t.Fatal(err)
	}
	writeLogFile(t, path, "d1\n")
	if err := os.Rename(path, filepath.Join(dir, arcB)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, arcA))
	writeLogFile(t, path, "e1\n")
	next, err := c.catchUp(path, f)
	if err != nil {
		t.Fatal(err)
	}
	next.Close()
	if want := "c1\nd1\ne1\n"; stdout.String() != want {
		t.Fatalf("hsvc logs -f printed %q, want %q", stdout.String(), want)
	}
}

// follow starts with no current; the first current rotates before the
// first catch-up that sees it: it is printed, as an archive (it was not).
func TestLogsFollowNoCurrentThenRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	c, stdout, _ := newCLI(context.Background(), "")
	c.markArchives(dir)
	f, err := c.catchUp(path, nil) // nothing there yet
	if err != nil || f != nil {
		t.Fatal(f, err)
	}
	writeLogFile(t, path, "c1\n")
	if err := os.Rename(path, filepath.Join(dir, arcA)); err != nil {
		t.Fatal(err)
	}
	writeLogFile(t, path, "d1\n")
	next, err := c.catchUp(path, f)
	if err != nil {
		t.Fatal(err)
	}
	next.Close()
	if want := "c1\nd1\n"; stdout.String() != want {
		t.Fatalf("hsvc logs -f printed %q, want %q", stdout.String(), want)
	}
}

// End to end, svclog with keep 1: hsvc logs -f -n 1 on a slow terminal
// (its tail's write blocks); meanwhile two rotations, the first archive
// (the file hsvc opened) pruned by the second: every line is printed
// (line 1 was not).
func TestLogsFollowKeep1SlowTail(t *testing.T) {
	sock, logPath := logServer(t)
	l, err := svclog.New(svclog.Options{Name: "dash", Dir: filepath.Dir(logPath), MaxSize: 60, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	inFile := func(s string) func() bool {
		return func() bool { b, _ := os.ReadFile(logPath); return strings.Contains(string(b), s) }
	}
	fmt.Fprintln(l.Writer(), "line 0")
	testprog.WaitFor(t, 5*time.Second, "line 0 in current", inFile("line 0"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &slowTerminal{blockAt: 1, gate: make(chan struct{})}
	c, _, stderr := newCLI(ctx, sock)
	c.stdout = out
	done := make(chan int, 1)
	go func() { done <- c.run([]string{"logs", "dash", "-f", "-n", "1"}) }()
	testprog.WaitFor(t, 5*time.Second, "hsvc printing its tail", func() bool { return out.writes.Load() == 1 })
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(l.Writer(), "line %d\n", i)
		testprog.WaitFor(t, 5*time.Second, "the line in current", inFile(fmt.Sprintf("line %d", i)))
	}
	close(out.gate)
	testprog.WaitFor(t, 5*time.Second, "line 2 followed", func() bool { return strings.Contains(out.String(), "line 2") })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for i := 0; i <= 2; i++ {
		if !strings.Contains(out.String(), fmt.Sprintf(" line %d\n", i)) {
			t.Errorf("line %d never printed; hsvc logs -f printed:\n%s", i, out.String())
		}
	}
}
