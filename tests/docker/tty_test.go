package docker

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// screen collects what a program writes to a pty.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{} // closed once the pty has nothing more to read
}

func newScreen() *screen { return &screen{done: make(chan struct{})} }

func (s *screen) copyFrom(r io.Reader) {
	defer close(s.done)
	b := make([]byte, 4096)
	for {
		n, err := r.Read(b)
		s.mu.Lock()
		s.buf.Write(b[:n])
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// ansi matches the escape sequences the fake TUI draws with.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// TestTTY: `docker run -it IMAGE --tui` attached to a pty this test owns.
// The TUI's first look at the terminal already shows the real size (docker
// sets it some 20 ms after the start; hinit waits for it), it is the
// terminal's foreground group and sees TERM unchanged, a resize redraws it,
// Ctrl-C ends it with 130, and nothing but main reaches the terminal, even
// with the dashboard (a service with console copies) running.
func TestTTY(t *testing.T) {
	t.Parallel()
	needEngine(t)
	n := name(t)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", "-v", n).Run() })
	args := append([]string{"run", "-it", "--rm"}, baseOpts(t, n)...)
	args = append(args, "-e", "TERM=xterm-256color", "-e", "HERMES_DASHBOARD=1", image, "--tui")
	cmd := exec.Command("docker", args...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatalf("start docker run -it under a pty: %v", err)
	}
	defer ptmx.Close()
	scr := newScreen()
	go scr.copyFrom(ptmx)
	waitScreen := func(s string) {
		t.Helper()
		waitFor(t, "the terminal to show "+s, 30*time.Second, func() bool { return strings.Contains(scr.String(), s) })
	}

	waitScreen("fake-tui size=")
	first := regexp.MustCompile(`fake-tui size=(\S+) first fg=(\S+) TERM=(\S+)`).FindStringSubmatch(ansi.ReplaceAllString(scr.String(), ""))
	if first == nil || first[1] != "100x30" || first[2] != "yes" || first[3] != "xterm-256color" {
		t.Errorf("first draw %q, want size=100x30 fg=yes TERM=xterm-256color", first)
	}
	// The dashboard must be running while the terminal is checked.
	waitFor(t, "the dashboard to be up", 30*time.Second, func() bool {
		r := dockerCmd(t, "exec", "-u", "hermes", n, "hsvc", "status", "dashboard")
		return r.code == 0 && strings.Contains(r.stdout, " up ")
	})

	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatalf("resize: %v", err)
	}
	waitScreen("fake-tui size=120x40 redraw")

	ptmx.Write([]byte{3}) // Ctrl-C
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("docker run -it did not end after Ctrl-C; screen:\n%q", scr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("docker run -it after Ctrl-C: %v, want exit status 130", err)
	}
	select {
	case <-scr.done: // docker run is gone: the pty has given all it had
	case <-time.After(10 * time.Second):
		t.Fatal("the pty still open 10 s after docker run exited")
	}
	checkOnlyMain(t, scr.String())
}

// checkOnlyMain fails unless every line on the screen is the TUI's own
// until hinit's "main exited" line, and hinit's own from there on: they
// come back to the terminal once main has exited.
func checkOnlyMain(t *testing.T, screen string) {
	t.Helper()
	during, after, ok := strings.Cut(ansi.ReplaceAllString(screen, ""), "hinit: main exited ")
	if !ok {
		t.Errorf("no \"hinit: main exited\" line after main; whole screen: %q", screen)
	}
	for _, l := range strings.Split(during, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "fake-tui ") {
			t.Errorf("something other than main wrote to the terminal: %q\nwhole screen: %q", l, screen)
		}
	}
	for _, l := range strings.Split(after, "\n")[1:] {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "hinit: ") {
			t.Errorf("after main, a line that is not hinit's: %q\nwhole screen: %q", l, screen)
		}
	}
}
