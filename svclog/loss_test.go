package svclog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// TestSymlinkedCurrent: a symlink planted as <dir>/current is not followed;
// the line is counted lost and reported once writing works again.
func TestSymlinkedCurrent(t *testing.T) {
	requireRoot(t)
	home := userHome(t)
	target := filepath.Join(filepath.Dir(home), "root-only")
	if err := os.WriteFile(target, []byte("root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "logs")
	os.Mkdir(dir, 0o755)
	os.Chown(dir, alice.UID, alice.GID)
	current := filepath.Join(dir, currentName)
	if err := os.Symlink(target, current); err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	l := newLog(t, Options{Dir: dir, Owner: alice, Now: clock.Now})

	fmt.Fprintln(l.Writer(), "lost")
	testprog.WaitFor(t, 5*time.Second, "the line to be counted lost", func() bool { return l.Lost() == 1 })
	if b, _ := os.ReadFile(target); string(b) != "root\n" {
		t.Fatalf("symlink target changed to %q", b)
	}

	os.Remove(current)
	clock.Add(retryEvery)
	fmt.Fprintln(l.Writer(), "kept")
	closeLog(t, l)
	got := texts(readEntries(t, current))
	want := []string{"hinit: 1 lines lost (open log: open " + current + ": path component is a symlink)", "kept"}
	if !slices.Equal(got, want) {
		t.Fatalf("log holds %q, want %q", got, want)
	}
}

// TestDirCreatedLater: a log dir that cannot be created at the first line
// (here: its parent is not the Owner's yet) is retried later.
func TestDirCreatedLater(t *testing.T) {
	requireRoot(t)
	home := userHome(t)
	parent := filepath.Join(home, "logs")
	os.Mkdir(parent, 0o755) // root's: alice cannot create the log dir
	dir := filepath.Join(parent, "svc")
	clock := newClock()
	l := newLog(t, Options{Dir: dir, Owner: alice, Now: clock.Now})

	fmt.Fprintln(l.Writer(), "one")
	fmt.Fprintln(l.Writer(), "two")
	testprog.WaitFor(t, 5*time.Second, "the lines to be counted lost", func() bool { return l.Lost() == 2 })
	os.Chown(parent, alice.UID, alice.GID) // the operator fixes it
	fmt.Fprintln(l.Writer(), "not yet")    // within retryEvery of the failure
	testprog.WaitFor(t, 5*time.Second, "the line to be counted lost", func() bool { return l.Lost() == 3 })
	clock.Add(retryEvery)
	fmt.Fprintln(l.Writer(), "three")
	closeLog(t, l)

	got := texts(readEntries(t, l.Path()))
	want := []string{"hinit: 3 lines lost (open log: open dir " + dir + ": permission denied)", "three"}
	if !slices.Equal(got, want) {
		t.Fatalf("log holds %q, want %q", got, want)
	}
}

// TestFullDisk: a full filesystem never blocks the service; the lines that
// do not fit are counted, and reported once there is room again.
func TestFullDisk(t *testing.T) {
	dir := tinyTmpfs(t)
	l := newLog(t, Options{Dir: dir, MaxSize: 1 << 20})

	const lines, width = 5000, 100       // 650 KB: ten times the room
	produce(t, l.Writer(), lines, width) // returns: failing writes hold nothing back
	testprog.WaitFor(t, 10*time.Second, "every line to be written or lost", func() bool {
		return completeLines(t, l.Path())+int(l.Lost()) == lines
	})
	if l.Lost() == 0 {
		t.Fatal("no line lost on a full disk")
	}
	// A line the disk cut short was taken back: no fragment stays.
	if b, err := os.ReadFile(l.Path()); err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("current on the full disk ends with %q (%v), want a whole line", b[max(0, len(b)-40):], err)
	}

	lost := l.Lost()
	if err := os.Truncate(l.Path(), 0); err != nil { // room again
		t.Fatal(err)
	}
	fmt.Fprintln(l.Writer(), "after")
	closeLog(t, l)
	want := []string{fmt.Sprintf("hinit: %d lines lost (write %s: no space left on device)", lost, l.Path()), "after"}
	if got := texts(readEntries(t, l.Path())); !slices.Equal(got, want) {
		t.Fatalf("log holds %q, want %q", got, want)
	}
}

// Archives that fill the filesystem (keep archives of max_size, more than
// it holds) make room for new lines, the oldest first. Before, current,
// emptied by the rotation, never reached max_size again, rotation (the
// only prune) never came, and every new line was lost while the oldest
// archives stayed.
func TestFullDiskOfArchives(t *testing.T) {
	dir := tinyTmpfs(t)
	l := newLog(t, Options{Dir: dir, MaxSize: 8 << 10, Keep: 20})
	const lines, width = 3000, 100 // 300 KB through a 64 KiB filesystem
	produce(t, l.Writer(), lines, width)
	testprog.WaitFor(t, 10*time.Second, "the last line to be written or lost", func() bool {
		b, _ := os.ReadFile(l.Path())
		return bytes.Contains(b, []byte(padLine(lines, width))) || l.Lost() > 0
	})
	closeLog(t, l)
	if l.Lost() != 0 {
		t.Fatalf("%d lines lost on a filesystem its own archives filled", l.Lost())
	}
	if got := texts(readEntries(t, l.Path())); len(got) == 0 || got[len(got)-1] != padLine(lines, width) {
		t.Fatalf("current ends with %q, want the last line", got[max(0, len(got)-1):])
	}
}

// Archives the owner removed since the dir was listed make no room: a
// full filesystem must not say they were removed, nor retry the write for
// each. It said "the oldest archive removed" for each such name.
func TestFullDiskAfterTheOwnerRemovedArchives(t *testing.T) {
	dir := tinyTmpfs(t)
	var logs testprog.Buffer
	l := newLog(t, Options{Dir: dir, MaxSize: 4 << 10, Keep: 20, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	produce(t, l.Writer(), 200, 100) // 20 KB: a few rotations, the archives known
	testprog.WaitFor(t, 10*time.Second, "three rotations and the last line", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "@*"))
		b, _ := os.ReadFile(l.Path())
		return len(m) >= 3 && bytes.Contains(b, []byte(padLine(200, 100)))
	})
	archives, _ := filepath.Glob(filepath.Join(dir, "@*"))
	for _, a := range archives {
		if err := os.Remove(a); err != nil {
			t.Fatal(err)
		}
	}
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := filler.Write(make([]byte, 4096)); err == nil; _, err = filler.Write(make([]byte, 4096)) {
	}
	filler.Close()
	produce(t, l.Writer(), 100, 100)
	closeLog(t, l)
	for _, a := range archives {
		if strings.Contains(logs.String(), "archive="+filepath.Base(a)) {
			t.Errorf("%s said removed to make room, after its owner had removed it:\n%s", filepath.Base(a), logs.String())
		}
	}
}

// TestFullDiskAfterTheOwnerEmptiedTheFile: a line a full disk cut short is
// taken back only from a file as hinit left it. Here its owner emptied it
// first (hinit's count is 30 KB, the file 0): the cut short line stays (the
// next starts on its own line); a cut by hinit's count padded the file
// with 30 KB of zeros.
func TestFullDiskAfterTheOwnerEmptiedTheFile(t *testing.T) {
	dir := tinyTmpfs(t)
	logs := filepath.Join(dir, "logs")
	l := newLog(t, Options{Dir: logs, MaxSize: 1 << 20})
	produce(t, l.Writer(), 30, 1000)
	testprog.WaitFor(t, 10*time.Second, "30 lines written", func() bool { b, _ := os.ReadFile(l.Path()); return bytes.Count(b, []byte{'\n'}) == 30 })
	if err := os.Truncate(l.Path(), 0); err != nil {
		t.Fatal(err)
	}
	// the disk all but full: the next lines are cut short, then refused
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 60<<10), 0o644); err != nil && !errors.Is(err, unix.ENOSPC) {
		t.Fatal(err)
	}
	produce(t, l.Writer(), 10, 1000)
	testprog.WaitFor(t, 10*time.Second, "the 10 lines written or lost", func() bool {
		return completeLines(t, l.Path())+int(l.Lost()) >= 10
	})
	closeLog(t, l)
	b, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte{0}); n > 0 || len(b) > 16<<10 {
		t.Errorf("current: %d bytes, %d of them zeros; want no zeros, a few lines", len(b), n)
	}
}

// tinyTmpfs is a fresh 64 KiB tmpfs to fill up, unmounted at the end.
func tinyTmpfs(t *testing.T) string {
	t.Helper()
	requireRoot(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tiny tmpfs to fill up: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// completeLines counts the newline-terminated lines of a file that are not
// loss reports.
func completeLines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n") - strings.Count(string(b), " hinit: ")
}

// TestBurstLosesNothing: a burst far faster than the file is written holds
// the producer back; no line is lost (before, 20% of these were).
func TestBurstLosesNothing(t *testing.T) {
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = time.Hour // nothing stalls here, however loaded the machine
	l := newLog(t, Options{Dir: t.TempDir(), MaxSize: 100 << 20})
	const lines, width = 50000, 100 // 5 MB: twenty times the queue
	produce(t, l.Writer(), lines, width)
	closeLog(t, l)
	if n, lost := completeLines(t, l.Path()), l.Lost(); n != lines || lost != 0 {
		t.Fatalf("%d lines in the file, %d lost; want %d and none lost", n, lost, lines)
	}
}

// TestStalledConsole: a console nobody reads holds the service back once,
// for stallWait, and never costs the log file a line; what the console
// missed is counted and reported.
func TestStalledConsole(t *testing.T) {
	cr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	defer cw.Close()
	dir := t.TempDir()
	l := newLog(t, Options{Name: "x", Dir: dir, MaxSize: 100 << 20, Console: cw})

	const lines, width = 20000, 100 // 2 MB: far more than pipe and queue hold
	produce(t, l.Writer(), lines, width)
	file, console := l.outs[0], l.outs[1]
	testprog.WaitFor(t, 10*time.Second, "every line in the file", func() bool {
		return completeLines(t, l.Path())+int(file.lost.Load()) == lines
	})
	if file.lost.Load() != 0 {
		t.Fatalf("the file lost %d lines while the console stalled", file.lost.Load())
	}
	if console.lost.Load() == 0 {
		t.Fatal("no line lost on a stalled console")
	}

	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(cr)
		got <- b
	}()
	closeLog(t, l) // the console drains now that it is read
	cw.Close()
	count, reported := 0, 0
	for _, ln := range strings.Split(strings.TrimSuffix(string(<-got), "\n"), "\n") {
		text, ok := strings.CutPrefix(ln, "[x] ")
		if n, isReport := lostReport(text); ok && isReport {
			reported += n
			continue
		}
		if !ok || len(text) != width {
			t.Fatalf("mangled console line %.80q", ln)
		}
		count++
	}
	if count+reported != lines || reported != int(console.lost.Load()) {
		t.Fatalf("%d lines on the console, %d reported lost, %d counted, want %d in all", count, reported, console.lost.Load(), lines)
	}
}

// exitScript is the burst of a service that fails at once: 100001 short
// lines (600 KB, 7 MB of queue cost), the last one its reason, then exit 78.
const exitScript = `seq 1 100000; echo FATAL: bad config; exit 78`

// exitLines is what exitScript prints, in order.
func exitLines() []string {
	want := make([]string, 0, 100001)
	for i := 1; i <= 100000; i++ {
		want = append(want, strconv.Itoa(i))
	}
	return append(want, "FATAL: bad config")
}

// runExit runs exitScript with w as stdout and stderr until it exits, and
// checks that it exited 78.
func runExit(t *testing.T, w *os.File) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", exitScript)
	cmd.Stdout, cmd.Stderr = w, w
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 78 {
		t.Fatalf("sh -c %q: %v, want exit status 78", exitScript, err)
	}
}

// readLines reads r at full speed until EOF, sending each line; the channel
// holds more than exitScript prints, so it never holds the reading back.
func readLines(r io.Reader) <-chan string {
	c := make(chan string, 2*len(exitLines()))
	go func() {
		defer close(c)
		br := bufio.NewReader(r)
		for {
			ln, err := br.ReadString('\n')
			if err != nil {
				return
			}
			c <- strings.TrimSuffix(ln, "\n")
		}
	}()
	return c
}

// TestExitAfterBurstLosesNothing: a service that ends right after a burst
// loses none of its lines, its last one ("FATAL: bad config") included,
// into outputs that are slower than the reader but moving: a file alone
// (the reviewer's setup) and a file with a console read at full speed
// (one write per line: slower than the reader). The instance's end
// (EndLine) lets the reader past the bound, and past twice the bound it
// still waits for a writer that makes room. Before, the rush refused
// every line past twice the bound: the end of what the pipe and the
// reader's buffer held was lost (thousands of lines, the last one first)
// on the console in every run and in the file in most.
func TestExitAfterBurstLosesNothing(t *testing.T) {
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = time.Hour // nothing stalls here, however loaded the machine
	want := exitLines()
	for _, withConsole := range []bool{false, true} {
		t.Run(map[bool]string{false: "file", true: "file and console"}[withConsole], func(t *testing.T) {
			opts := Options{Name: "x", Dir: t.TempDir(), MaxSize: 100 << 20}
			var console <-chan string
			if withConsole {
				cr, cw, err := os.Pipe()
				must(t, err)
				defer cr.Close()
				defer cw.Close()
				opts.Console, console = cw, readLines(cr)
			}
			l := newLog(t, opts)
			runExit(t, l.Writer())
			l.EndLine() // what supervise does when the instance has exited
			closeLog(t, l)
			if got := texts(readEntries(t, l.Path())); !slices.Equal(got, want) || l.Lost() != 0 {
				t.Fatalf("the file holds %d lines ending %q, %d lost; want %d ending %q, none lost",
					len(got), got[max(0, len(got)-2):], l.Lost(), len(want), want[len(want)-1])
			}
			if !withConsole {
				return
			}
			opts.Console.(*os.File).Close()
			var got []string
			for ln := range console {
				got = append(got, strings.TrimPrefix(ln, "[x] "))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("the console got %d lines ending %q; want %d ending %q",
					len(got), got[max(0, len(got)-2):], len(want), want[len(want)-1])
			}
		})
	}
}

// TestLossReportedWhenNoLineFollows: lines refused by a stalled console
// are reported there once it moves again, though no line follows them
// (the service has exited and stays down, the Log stays open), and the
// reports add up exactly to the lines missing, each where they are
// missing. The file, which did not stall, has every line. Before, the
// report rode on the next line accepted only: the loss of an exited
// service's last lines was never reported until the log was closed.
func TestLossReportedWhenNoLineFollows(t *testing.T) {
	// stallWait stays a second, as in TestStalledConsole: shorter, a file
	// writer slowed down by the race detector may be taken as stalled.
	cr, cw, err := os.Pipe()
	must(t, err)
	defer cr.Close()
	defer cw.Close()
	l := newLog(t, Options{Name: "x", Dir: t.TempDir(), MaxSize: 100 << 20, Console: cw})
	file, console := l.outs[0], l.outs[1]
	want := exitLines()

	runExit(t, l.Writer()) // nobody reads the console: it stalls, lines are refused
	testprog.WaitFor(t, 10*time.Second, "every line in the file or lost", func() bool {
		return completeLines(t, l.Path())+int(file.lost.Load()) == len(want)
	})
	l.EndLine()
	if console.lost.Load() == 0 {
		t.Fatal("no line refused by a console nobody reads")
	}

	// The console is read again: what it holds comes, then the report of
	// what it refused, up to the last line, with no line after them.
	lines := readLines(cr)
	next, reported := 0, 0 // the index in want of the next line; the lines reported lost
	check := func(ln string) {
		t.Helper()
		text, ok := strings.CutPrefix(ln, "[x] ")
		if n, isReport := lostReport(text); ok && isReport {
			next, reported = next+n, reported+n
			return
		}
		if !ok || next >= len(want) || text != want[next] {
			t.Fatalf("console line %q where %q was due", ln, want[min(next, len(want)-1)])
		}
		next++
	}
	timeout := time.After(10 * time.Second)
	for next < len(want) {
		select {
		case ln := <-lines:
			check(ln)
		case <-timeout:
			t.Fatalf("the console accounts for %d of %d lines (%d reported lost, %d counted): the report of the last ones never came",
				next, len(want), reported, console.lost.Load())
		}
	}
	closeLog(t, l)
	cw.Close()
	for ln := range lines {
		t.Errorf("console line %q after the last one", ln)
	}
	if reported != int(console.lost.Load()) {
		t.Errorf("%d lines reported lost on the console, %d counted", reported, console.lost.Load())
	}
	if got := texts(readEntries(t, l.Path())); !slices.Equal(got, want) || file.lost.Load() != 0 {
		t.Fatalf("the file holds %d lines ending %q; want %d ending %q, none lost",
			len(got), got[max(0, len(got)-2):], len(want), want[len(want)-1])
	}
}

// A Close past its ctx (the shutdown's deadline) still writes to the file
// what the pipe and the reader hold: the console gives up then, and no
// longer holds the reader back. Before, the reader stayed waiting on the
// console's full queue, Close returned, and PID 1 exited with those lines
// never written to a healthy disk (a review: 40 flooding services killed
// at the deadline, 100,000 file lines lost).
func TestForcedCloseWritesTheFile(t *testing.T) {
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = time.Hour // a console that is slow, not stalled: the reader waits for it
	gate := make(chan struct{})
	defer close(gate) // the console moves again, before newLog's cleanup closes the log
	console := writerFunc(func(p []byte) (int, error) { <-gate; return len(p), nil })
	l := newLog(t, Options{Name: "x", Dir: t.TempDir(), MaxSize: 100 << 20, Console: console})
	// More than the console's queue holds (1,598 lines of 164 bytes of
	// cost), less than it, the reader's buffer and the pipe do, a pipe of
	// one page included: the producer ends.
	const lines, width = 1650, 100
	produce(t, l.Writer(), lines, width)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := l.Close(ctx)
	if n := completeLines(t, l.Path()); n != lines {
		t.Fatalf("%d lines in the file when Close returned (%v), want %d", n, err, lines)
	}
	if err == nil || !strings.Contains(err.Error(), "the console did not get the last lines") {
		t.Errorf("Close: %v, want the console behind", err)
	}
}

// writerFunc is a Console made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A current that an earlier boot left mid-line (a write cut short by a
// full disk, then the container stopped) gets its newline before the next
// boot's first line. Before, that line was glued to the fragment.
func TestCurrentLeftMidLine(t *testing.T) {
	dir := t.TempDir()
	const frag = "2026-01-01T00:00:00.000000Z line-175-padpa"
	if err := os.WriteFile(filepath.Join(dir, currentName), []byte("2026-01-01T00:00:00.000000Z whole\n"+frag), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newLog(t, Options{Dir: dir})
	fmt.Fprintln(l.Writer(), "first of this boot")
	closeLog(t, l)
	want := []string{"whole", "line-175-padpa", "first of this boot"}
	if got := texts(readEntries(t, l.Path())); !slices.Equal(got, want) {
		t.Fatalf("log holds %q, want %q", got, want)
	}
}

// TestRotationFailureSaidOnce: a log dir its owner made read-only cannot
// rotate: current grows past max_size, nothing is lost, and hinit's log
// says so once, not at each retry (every second, for each such service),
// then once that rotation works again.
func TestRotationFailureSaidOnce(t *testing.T) {
	requireRoot(t)
	dir := filepath.Join(userHome(t), "logs")
	var out syncBuffer
	clock := newClock()
	l := newLog(t, Options{Dir: dir, Owner: alice, MaxSize: 100, Keep: 2, Now: clock.Now,
		Logger: slog.New(slog.NewTextHandler(&out, nil))})
	fmt.Fprintln(l.Writer(), strings.Repeat("a", 80))
	testprog.WaitFor(t, 5*time.Second, "the first line", func() bool { return fileHas(filepath.Join(dir, currentName), "aaa") })
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		clock.Add(retryEvery)
		fmt.Fprintf(l.Writer(), "line %d %s\n", i, strings.Repeat("b", 80))
	}
	testprog.WaitFor(t, 5*time.Second, "the lines in current", func() bool { return fileHas(filepath.Join(dir, currentName), "line 4") })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	clock.Add(retryEvery)
	fmt.Fprintln(l.Writer(), "after")
	testprog.WaitFor(t, 5*time.Second, "rotation again", func() bool { return strings.Contains(out.String(), "log rotation works again") })
	closeLog(t, l)
	if n := strings.Count(out.String(), "log rotation failed"); n != 1 || l.Lost() != 0 {
		t.Errorf("%d rotation warnings, %d lines lost; want 1, none:\n%s", n, l.Lost(), out.String())
	}
}

// failingWriter fails every write, as a file on a full disk does.
type failingWriter struct{}

func (failingWriter) write([]line) (int, error) {
	return 0, errors.New("write current: no space left on device")
}
func (failingWriter) close() {}

// TestLossUnreportedToTheEndIsCounted: lines lost with no later line
// written to carry their report (the disk full to the end) are counted in
// hinit's own log when the output finishes; before, its one warning had
// no count.
func TestLossUnreportedToTheEndIsCounted(t *testing.T) {
	var out syncBuffer
	o := newOutput("file", failingWriter{}, nil, slog.New(slog.NewTextHandler(&out, nil)))
	for range 3 {
		o.push(line{text: []byte("x")})
	}
	o.finish()
	<-o.done
	if !strings.Contains(out.String(), `msg="log lines lost, and not reported in the log" output=file lost=3 reason="write current: no space left on device"`) {
		t.Errorf("hinit's log:\n%s", out.String())
	}
}
