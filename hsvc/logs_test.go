package hsvc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

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
		// tail's spelling: it said "unknown option -n5".
		{"n stuck to its value", ptr(numbered(1, 30)), []string{"logs", "dash", "-n5"}, 0, numbered(26, 30), ""},
		{"no flag name", nil, []string{"logs", "dash", "-="}, 2, "", "unknown option -="},
		{"n stuck to a bad value", nil, []string{"logs", "dash", "-nx"}, 2, "", `-n "x": not a whole number`},
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

// A sparse TiB planted as current (the log dir is its service user's):
// root's hsvc logs reads and prints n longest lines of it, and is done.
// It read the whole TiB from its end, then copied all of it.
func TestLogsSparsePlanted(t *testing.T) {
	sock, logPath := logServer(t)
	os.Remove(logPath)
	f, err := os.Create(logPath)
	if err == nil {
		err = f.Truncate(1 << 40)
		f.Close()
	}
	if err != nil {
		t.Skipf("no sparse TiB here: %v", err)
	}
	c, stdout, stderr := newCLI(context.Background(), sock)
	done := make(chan int, 1)
	go func() { done <- c.run([]string{"logs", "dash", "-n", "3"}) }()
	select {
	case code := <-done:
		checkRun(t, code, "", stderr.String(), 0, "", "")
		if got, want := len(stdout.String()), 3*longestLine; got != want {
			t.Errorf("printed %d bytes, want %d (3 longest lines)", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hsvc logs still reading the sparse TiB after 10 s")
	}
}

// countingZeros reads as a sparse file of zeros and counts what is read.
type countingZeros struct{ read int64 }

func (z *countingZeros) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

func TestLastLines(t *testing.T) {
	long := strings.Repeat("x", svclog.MaxLine+40) + "\n" // a piece, its stamp, a newline
	planted := int64(1) << 40                             // a sparse TiB of zeros, no newline
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
		{"lines across blocks", strings.Repeat(long, 5) + "tail\n", 3, 3 * int64(len(long)), 3},
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
	// A file that is no log hinit wrote is read no further back than n
	// longest lines (it read the whole TiB, and printed it).
	z := &countingZeros{}
	got, lines, err := lastLines(z, planted, 20)
	if want := planted - 20*longestLine; err != nil || got != want || lines != 20 || z.read > 20*longestLine {
		t.Errorf("lastLines of a sparse TiB = %d, %d lines, %v, %d bytes read; want %d, 20 lines, at most %d bytes read",
			got, lines, err, z.read, want, 20*longestLine)
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

// TestLogsFollowSlowTerminal: hsvc logs -f on a slow terminal (a Write of
// hsvc's waits) while the log rotates, one line a file: every line is
// printed, in order. Before, hsvc finished the file it had and jumped to
// the current one, losing the archives made meanwhile; and with keep 1,
// two rotations while its tail was printing (the file it had opened
// pruned by the second) lost the file between.
func TestLogsFollowSlowTerminal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		keep    int
		blockAt int32 // hsvc's Write that waits: 1 its tail, 2 the next line
		last    int   // lines up to last are written, from blockAt on while it waits
	}{
		{"rotations while it prints", 10, 2, 4},
		{"keep 1, the file opened pruned", 1, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock, logPath := logServer(t)
			l, err := svclog.New(svclog.Options{Name: "dash", Dir: filepath.Dir(logPath), MaxSize: 60, Keep: tc.keep})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close(context.Background())
			write := func(i int) {
				fmt.Fprintf(l.Writer(), "line %d\n", i)
				testprog.WaitFor(t, 5*time.Second, "the line in current", func() bool {
					b, _ := os.ReadFile(logPath)
					return strings.Contains(string(b), fmt.Sprintf("line %d", i))
				})
			}
			write(0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &slowTerminal{blockAt: tc.blockAt, gate: make(chan struct{})}
			c, _, stderr := newCLI(ctx, sock)
			c.stdout = out
			done := make(chan int, 1)
			go func() { done <- c.run([]string{"logs", "dash", "-f", "-n", "1"}) }()
			testprog.WaitFor(t, 5*time.Second, "the tail", func() bool { return out.writes.Load() >= 1 })
			for i := 1; i < int(tc.blockAt); i++ {
				fmt.Fprintf(l.Writer(), "line %d\n", i)
			}
			testprog.WaitFor(t, 5*time.Second, "hsvc waiting on the terminal", func() bool { return out.writes.Load() == tc.blockAt })
			for i := int(tc.blockAt); i <= tc.last; i++ {
				write(i)
			}
			close(out.gate)
			last := fmt.Sprintf("line %d", tc.last)
			testprog.WaitFor(t, 5*time.Second, last+" followed", func() bool { return strings.Contains(out.String(), last) })
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for i := 0; i <= tc.last; i++ {
				if !strings.Contains(out.String(), fmt.Sprintf(" line %d\n", i)) {
					t.Errorf("line %d never printed; hsvc logs -f printed:\n%s", i, out.String())
				}
			}
		})
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

func writeLogFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// logDir drives a log dir as svclog does, for the races of hsvc logs with
// rotations: archives are made in order, named arc(0), arc(1), ...
type logDir struct {
	t    *testing.T
	dir  string
	made int // archives made so far
}

func arc(i int) string { return fmt.Sprintf("@20260101T0000%02d.000000Z.s", i) }

// newLogDir makes a log dir whose archives hold the given texts.
func newLogDir(t *testing.T, archives ...string) *logDir {
	d := &logDir{t: t, dir: t.TempDir()}
	for _, a := range archives {
		writeLogFile(t, filepath.Join(d.dir, arc(d.made)), a)
		d.made++
	}
	return d
}

func (d *logDir) path() string { return filepath.Join(d.dir, "current") }

// write makes current hold s.
func (d *logDir) write(s string) { writeLogFile(d.t, d.path(), s) }

// open opens current, as showLog does.
func (d *logDir) open() *os.File {
	f, err := os.Open(d.path())
	if err != nil {
		d.t.Fatal(err)
	}
	return f
}

// rotate renames current to the next archive and makes a new current
// holding s.
func (d *logDir) rotate(s string) {
	if err := os.Rename(d.path(), filepath.Join(d.dir, arc(d.made))); err != nil {
		d.t.Fatal(err)
	}
	d.made++
	d.write(s)
}

// TestLogsRotationRaces: hsvc logs -n and -f against rotations that land
// between their steps. Each file is printed once, in order, with its lines
// ended. Before, a rotation between opening current and listing the
// archives printed the file opened twice (or a newer archive as older),
// an archive ending mid-line (a write that failed) was joined to the next
// line, a removed current printed every old archive, two rotations before
// follow's start with keep 1 lost a file, and a first current that rotated
// before -f saw it was never printed.
func TestLogsRotationRaces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		follow bool // tail, then catch up as -f does
		run    func(t *testing.T, d *logDir, c *cli, out io.Writer) *os.File
		want   string
	}{
		{"tail: a rotation after the open", false, func(t *testing.T, d *logDir, c *cli, out io.Writer) *os.File {
			d.write("c1\n")
			f := d.open()
			d.rotate("")
			must(t, tail(d.path(), f, 5, out))
			return f
		}, "a1\na2\nc1\n"},
		{"tail: two rotations after the open", false, func(t *testing.T, d *logDir, c *cli, out io.Writer) *os.File {
			d.write("c1\n")
			f := d.open()
			d.rotate("d1\n")
			d.rotate("")
			must(t, tail(d.path(), f, 5, out))
			return f
		}, "a1\na2\nc1\n"},
		{"tail: an archive ending mid-line", false, func(t *testing.T, d *logDir, c *cli, out io.Writer) *os.File {
			writeLogFile(t, filepath.Join(d.dir, arc(1)), "a2") // a write that failed
			d.write("c1\n")
			f := d.open()
			must(t, tail(d.path(), f, 3, out))
			return f
		}, "a1\na2\nc1\n"},
		{"follow: current removed", true, func(t *testing.T, d *logDir, c *cli, out io.Writer) *os.File {
			d.write("x1\n")
			c.markArchives(d.dir)
			f := d.open()
			must(t, tail(d.path(), f, 0, out))
			must(t, os.Remove(d.path()))
			d.write("y1\n")
			return f
		}, "y1\n"},
		{"follow: two rotations after the open", true, func(t *testing.T, d *logDir, c *cli, out io.Writer) *os.File {
			d.write("c1\n")
			c.markArchives(d.dir)
			f := d.open()
			d.rotate("d1\n")
			d.rotate("e1\n")
			must(t, tail(d.path(), f, 2, out))
			return f
		}, "a2\nc1\nd1\ne1\n"},
		{"follow: keep 1, the file opened pruned", true, func(t *testing.T, d *logDir, c *cli, out io.Writer) *os.File {
			d.write("c1\n")
			c.markArchives(d.dir)
			f := d.open()
			must(t, tail(d.path(), f, 1, out))
			d.rotate("d1\n")
			d.rotate("e1\n")
			for i := range d.made - 1 {
				os.Remove(filepath.Join(d.dir, arc(i)))
			}
			return f
		}, "c1\nd1\ne1\n"},
		{"follow: no current at the start", true, func(t *testing.T, d *logDir, c *cli, out io.Writer) *os.File {
			c.markArchives(d.dir)
			f, err := c.catchUp(d.path(), nil)
			if err != nil || f != nil {
				t.Fatalf("catchUp with nothing there: %v, %v", f, err)
			}
			d.write("c1\n")
			d.rotate("d1\n")
			return nil
		}, "c1\nd1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newLogDir(t, "a1\n", "a2\n")
			c, stdout, _ := newCLI(context.Background(), "")
			f := tc.run(t, d, c, stdout)
			if tc.follow {
				next, err := c.catchUp(d.path(), f)
				if err != nil {
					t.Fatal(err)
				}
				f = next
			}
			if f != nil {
				f.Close()
			}
			if stdout.String() != tc.want {
				t.Errorf("printed %q, want %q", stdout.String(), tc.want)
			}
		})
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

// What the log dir's owner plants as current is not read: a FIFO (root's
// hsvc logs hung in open(2) for good, seen in the image as root against
// the hermes user's gateway log dir) or a symlink (root printed whatever
// it named, /etc/shadow included).
func TestLogsPlantedByTheOwner(t *testing.T) {
	sock, logPath := logServer(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		plant   func() error
		errPart string
	}{
		{"fifo", func() error { return syscall.Mkfifo(logPath, 0o644) }, "not a regular file"},
		{"symlink", func() error { return os.Symlink(secret, logPath) }, "symlink"},
	}
	for _, tc := range tests {
		for _, args := range [][]string{{"logs", "dash"}, {"logs", "-f", "dash"}} {
			t.Run(tc.name+" "+strings.Join(args, " "), func(t *testing.T) {
				os.Remove(logPath)
				if err := tc.plant(); err != nil {
					t.Fatal(err)
				}
				c, stdout, stderr := newCLI(context.Background(), sock)
				done := make(chan int, 1)
				go func() { done <- c.run(args) }()
				var code int
				select {
				case code = <-done:
				case <-time.After(10 * time.Second):
					if w, err := os.OpenFile(logPath, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						w.Close() // lets the blocked open return
					}
					t.Fatal("hsvc logs still blocked after 10 s")
				}
				checkRun(t, code, stdout.String(), stderr.String(), 1, "", tc.errPart)
				if stdout.String() != "" {
					t.Errorf("stdout %q, want nothing", stdout)
				}
			})
		}
	}
}

// followFrom runs hsvc logs dash -f -n 1 against a fixed status whose
// service dash logs to logPath, until the test ends; once it is watching,
// it returns; *code is its exit code once done is closed.
func followFrom(t *testing.T, logPath string) (stdout, stderr *testprog.Buffer, done <-chan struct{}, code *int) {
	t.Helper()
	sock := serve(t, fixedStatus([]control.Status{{Name: "dash", State: "down", LogPath: logPath}}))
	ctx, cancel := context.WithCancel(context.Background())
	c, stdout, stderr := newCLI(ctx, sock)
	watching := make(chan struct{})
	followWatching = func(string) { close(watching) }
	ch, code := make(chan struct{}), new(int)
	go func() {
		defer close(ch)
		*code = c.run([]string{"logs", "dash", "-f", "-n", "1"})
	}()
	t.Cleanup(func() {
		cancel()
		<-ch
		followWatching = func(string) {}
	})
	select { // the watch has begun before the test changes anything
	case <-watching:
	case <-ch:
		t.Fatalf("hsvc logs -f exited %d before it watched: %s", *code, stderr)
	}
	return stdout, stderr, ch, code
}

// waitOutput waits until stdout is want, failing at once if hsvc exits.
func waitOutput(t *testing.T, stdout, stderr *testprog.Buffer, done <-chan struct{}, code *int, what, want string) {
	t.Helper()
	testprog.WaitFor(t, 5*time.Second, what, func() bool {
		select {
		case <-done:
			t.Fatalf("hsvc logs -f exited %d before %s: %s", *code, what, stderr)
		default:
		}
		return stdout.String() == want
	})
}

// A service that never ran has no log dir yet: its log dir is made at
// its first start. hsvc logs NAME says "hsvc logs -f waits for it", and
// -f does. Before, it exited 1 at once: "watch its directory: no such
// file or directory".
func TestLogsFollowBeforeLogDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "dash")
	logPath := filepath.Join(dir, "current")
	stdout, stderr, done, code := followFrom(t, logPath)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, logPath, numbered(1, 1))
	waitOutput(t, stdout, stderr, done, code, "the first line", numbered(1, 1))
	appendTo(t, logPath, numbered(2, 2))
	waitOutput(t, stdout, stderr, done, code, "the second line", numbered(1, 2))
}

// A log dir moved away or deleted is made again at the next line (README):
// -f follows the new one. Before, it watched the old dir for ever and
// printed nothing more.
func TestLogsFollowLogDirMadeAgain(t *testing.T) {
	for _, how := range []string{"removed", "moved away"} {
		t.Run(how, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "dash")
			logPath := filepath.Join(dir, "current")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			appendTo(t, logPath, numbered(1, 1))
			stdout, stderr, done, code := followFrom(t, logPath)
			waitOutput(t, stdout, stderr, done, code, "the first line", numbered(1, 1))
			var err error
			if how == "removed" {
				err = os.RemoveAll(dir)
			} else {
				err = os.Rename(dir, filepath.Join(base, "old"))
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			appendTo(t, logPath, numbered(2, 2))
			waitOutput(t, stdout, stderr, done, code, "a line in the new dir", numbered(1, 2))
			appendTo(t, logPath, numbered(3, 3))
			waitOutput(t, stdout, stderr, done, code, "another line in the new dir", numbered(1, 3))
		})
	}
}

// TestLogsEscapedToATerminal: what a service wrote is its owner's to
// choose, and root's hsvc logs prints it: to a terminal, ESC, \r, C1 and
// bidirectional controls and invalid bytes come out escaped (an OSC
// sequence set root's title or clipboard, a \r wrote over a line's time
// stamp), a character cut between two writes whole; newlines and tabs as
// they are. --raw, or a pipe, prints the bytes as they are.
func TestLogsEscapedToATerminal(t *testing.T) {
	sock, logPath := logServer(t)
	const text = "2026-05-21T06:18:05Z a\tb \x1b]0;PWNED\x07 \x1b[2J\rfake \xc2\x9b\xe2\x80\xae \xff é\n"
	if err := os.WriteFile(logPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer ptm.Close()
	defer pts.Close()
	raw, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	raw.Oflag &^= unix.OPOST // the bytes hsvc writes, no \n → \r\n
	if err := unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, raw); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "dash"}, "2026-05-21T06:18:05Z a\tb \\x1b]0;PWNED\\x07 \\x1b[2J\\x0dfake \\x9b\\u202e \\xff é\n"},
		{[]string{"logs", "dash", "--raw"}, text},
	} {
		c, _, stderr := newCLI(context.Background(), sock)
		c.stdout = pts
		if code := c.run(tc.args); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, stderr)
		}
		got := make([]byte, 0, len(tc.want))
		// bounded: output shorter than want must fail, not hang
		if err := ptm.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		for len(got) < len(tc.want) {
			b := make([]byte, len(tc.want)-len(got))
			n, err := ptm.Read(b)
			if err != nil {
				t.Fatalf("%q to a terminal: read %q, then %v", tc.args, got, err)
			}
			got = append(got, b[:n]...)
		}
		if string(got) != tc.want {
			t.Errorf("%q to a terminal:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	c, stdout, _ := newCLI(context.Background(), sock)
	if code := c.run([]string{"logs", "dash"}); code != 0 || stdout.String() != text {
		t.Errorf("to a pipe: exit %d, %q; want 0, the bytes as they are", code, stdout)
	}

	// A character cut between two writes is escaped whole, or kept whole.
	var b strings.Builder
	e := &escapingWriter{w: &b}
	for _, p := range []string{"x\xc2", "\x9b y \xe2\x80", "\xae é\xc3", "\xa9\n\xe2"} {
		e.Write([]byte(p))
	}
	e.flush()
	if want := `x\x9b y \u202e éé` + "\n" + `\xe2`; b.String() != want {
		t.Errorf("across writes: %q, want %q", b.String(), want)
	}
}
