package svclog

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"hinit/asuser"
)

// TestMain turns the test binary into the helper program "lines N WIDTH":
// it prints "line 1" .. "line N" to stdout, each padded with 'x' to WIDTH
// bytes.
func TestMain(m *testing.M) {
	if args := strings.Fields(os.Getenv("SVCLOG_HELPER")); len(args) == 3 && args[0] == "lines" {
		n, _ := strconv.Atoi(args[1])
		width, _ := strconv.Atoi(args[2])
		out := bufio.NewWriter(os.Stdout)
		for i := 1; i <= n; i++ {
			out.WriteString(padLine(i, width) + "\n")
		}
		out.Flush()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// padLine is line i of the helper, padded to width.
func padLine(i, width int) string {
	s := "line " + strconv.Itoa(i)
	if len(s) < width {
		s += strings.Repeat("x", width-len(s))
	}
	return s
}

// produce runs the helper with w as stdout and stderr until it exits.
func produce(t *testing.T, w *os.File, n, width int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("SVCLOG_HELPER=lines %d %d", n, width),
		"GORACE=atexit_sleep_ms=0") // the race runtime would idle 1s at exit

	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		t.Fatalf("producer: %v", err)
	}
}

// sh runs a shell script with w as stdout and stderr until it exits.
func sh(t *testing.T, w *os.File, script string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		t.Fatalf("sh -c %q: %v", script, err)
	}
}

// newLog makes a Log that is closed at the end of the test.
func newLog(t *testing.T, o Options) *Log {
	t.Helper()
	if o.Name == "" {
		o.Name = "svc"
	}
	l, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l.Close(ctx)
	})
	return l
}

// closeLog closes l, failing the test when it does not finish.
func closeLog(t *testing.T, l *Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// entry is one line of a log file.
type entry struct {
	t    time.Time
	text string
}

// readEntries parses a log file; a line without a valid timestamp fails.
func readEntries(t *testing.T, path string) []entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var es []entry
	for _, ln := range strings.SplitAfter(string(b), "\n") {
		if ln == "" || ln == "\n" {
			continue
		}
		stamp, text, ok := strings.Cut(strings.TrimSuffix(ln, "\n"), " ")
		ts, err := time.Parse(stampLayout, stamp)
		if !ok || err != nil || len(stamp) != len(stampLayout) {
			t.Fatalf("%s: bad line %q", path, ln)
		}
		es = append(es, entry{ts, text})
	}
	return es
}

// texts returns the text of entries.
func texts(es []entry) []string {
	var s []string
	for _, e := range es {
		s = append(s, e.text)
	}
	return s
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time // guarded by mu
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 5, 21, 6, 18, 5, 123456000, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// alice is the service user of the tests: a uid with no passwd entry.
var alice = asuser.ID{UID: 10000, GID: 10000}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: logs are written as another user")
	}
}

// userHome returns a fresh directory owned by alice, in a root-owned 0755
// dir removed at the end of the test.
func userHome(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "svclog-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	home := filepath.Join(base, "home")
	for _, err := range []error{os.Chmod(base, 0o755), os.Mkdir(home, 0o755), os.Chown(home, alice.UID, alice.GID)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// archives lists the archive names in dir, oldest first.
func archives(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "@") && strings.HasSuffix(n, ".s") {
			names = append(names, n)
		}
	}
	return names, nil // ReadDir sorts by name
}
