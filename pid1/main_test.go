package pid1

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// Main routing per SPEC §2: main.default without CMD, executables on PATH
// as given, main.wrap for anything else, main.always_wrap forcing the wrap.
func TestMainRouting(t *testing.T) {
	cfg := `main:
  default: [/bin/echo, default-main]
  wrap: [/bin/echo, wrapped]
  always_wrap: [sleep]
`
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no CMD runs main.default", nil, "default-main"},
		{"hermes subcommand is wrapped", []string{"chat", "-q", "hi"}, "wrapped chat -q hi"},
		{"executable on PATH runs as given", []string{"echo", "plain"}, "plain"},
		{"a path runs as given", []string{"/bin/echo", "by-path"}, "by-path"},
		{"always_wrap wraps a program on PATH", []string{"sleep", "1"}, "wrapped sleep 1"},
		{"flags are wrapped", []string{"--tui"}, "wrapped --tui"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, code := runInit(t, initOpts{config: cfg, args: tt.args})
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			if got := strings.TrimSpace(p.stdout.String()); got != tt.want {
				t.Errorf("main printed %q, want %q", got, tt.want)
			}
		})
	}
}

// As root, main runs as main.user with HOME/USER/LOGNAME to match; not
// root, nothing is dropped and nothing fails because of it.
func TestMainUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	testprog.ExposeBinary(t)
	id := testprog.UnusedUID(t)
	cfg := fmt.Sprintf("user: \"%d:%d\"\n", id, id)
	script := `echo "$(id -u):$(id -g) HOME=$HOME USER=$USER"`
	p, code := runInit(t, initOpts{config: cfg, args: []string{"/bin/sh", "-c", script}})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if got, want := strings.TrimSpace(p.stdout.String()), fmt.Sprintf("%d:%d HOME=/ USER=%d", id, id, id); got != want {
		t.Errorf("main as user: %q, want %q", got, want)
	}
	p, code = runInit(t, initOpts{config: "user: root\nmain: {user: root}\n", notPID1: true,
		cred: &syscall.Credential{Uid: uint32(id), Gid: uint32(id)}, env: []string{"HOME=/given"},
		args: []string{"/bin/sh", "-c", `echo "$(id -u) HOME=$HOME USER=$USER"; exit 7`}})
	// Not root, main keeps the HOME the runtime gave it (docker's -e HOME,
	// a pod's env): a made-up account of a uid without a passwd entry
	// would put HOME=/ over it.
	if want := fmt.Sprintf("%d HOME=/given USER=", id); code != 7 || strings.TrimSpace(p.stdout.String()) != want {
		t.Errorf("hinit as uid %d: exit %d, main said %q; want 7 and %q", id, code, p.stdout, want)
	}
	if strings.Contains(p.stderr.String(), "error") {
		t.Errorf("non-root run logged an error:\n%s", p.stderr)
	}
}

// Static services run beside main: console copies on the container's
// stdout, a crashing one backs off, and an essential one that fails takes
// the container down with its exit code.
func TestStaticServices(t *testing.T) {
	// Each run of the crasher waits for a word the talker writes once it
	// has said its lines: under load the crasher gave up (and hinit shut
	// down) before the talker had started.
	said := filepath.Join(testprog.PublicDir(t), "said")
	if err := unix.Mkfifo(said, 0o666); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`services:
  talker:
    command: [/bin/sh, -c, 'for i in 1 2 3; do echo hello $i; done; exec 3<>%[1]s; printf "go\ngo\ngo\ngo\ngo\ngo\n" >&3; exec sleep 60']
    restart: never
  crasher:
    command: [/bin/sh, -c, 'read _ < %[1]s; exit 9']
    backoff: {initial: 20ms, max: 40ms}
    give_up: {restarts: 3, within: 1m}
    essential: true
  off:
    command: [/bin/true]
    enabled: "${DASH_FLAG}"
`, said)
	p, code := runInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}})
	if code != 9 {
		t.Errorf("essential service failure gave exit %d, want 9", code)
	}
	out := p.stdout.String()
	for i := 1; i <= 3; i++ {
		if want := fmt.Sprintf("[talker] hello %d\n", i); !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(p.stderr.String(), "essential service failed: shutting down svc=crasher code=9") {
		t.Errorf("no essential failure line:\n%s", p.stderr)
	}
}

// An essential service that failed before main started ends the boot
// there: main never starts, to be sent SIGTERM a moment later (and, with a
// terminal, handed it), and the status is the service's. Main started.
func TestEssentialFailedBeforeMain(t *testing.T) {
	ran := filepath.Join(testprog.PublicDir(t), "main-ran")
	cfg := "services:\n  ess:\n    command: [/nonexistent/prog]\n    restart: never\n    essential: true\n"
	p, code := runInit(t, initOpts{config: cfg, args: []string{"/bin/sh", "-c", "touch " + ran + "; exec sleep 60"},
		env: []string{"HINIT_TEST_MAIN_AFTER_REQUEST=1"}})
	if code != 127 {
		t.Errorf("exit %d, want the essential service's 127", code)
	}
	if _, err := os.Stat(ran); err == nil || strings.Contains(p.stderr.String(), "hinit: main started") {
		t.Errorf("main started after the essential service had failed:\n%s", p.stderr)
	}
	if want := "shutting down before main started: requested with exit status 127"; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, p.stderr)
	}
}

// main.env wins over the HOME, USER and LOGNAME of main's user, as a
// service's env: does (package launch's precedence).
func TestMainOwnEnvWins(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	id := testprog.UnusedUID(t)
	cfg := fmt.Sprintf("user: \"%d:%d\"\nmain: {env: {HOME: /x, LOGNAME: me}}\n", id, id)
	script := `echo "$(id -u) HOME=$HOME USER=$USER LOGNAME=$LOGNAME"`
	p, code := runInit(t, initOpts{config: cfg, args: []string{"/bin/sh", "-c", script}})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if got, want := strings.TrimSpace(p.stdout.String()), fmt.Sprintf("%d HOME=/x USER=%d LOGNAME=me", id, id); got != want {
		t.Errorf("main printed %q, want %q", got, want)
	}
}

// compat: s6-overlay needs hinit as PID 1 (hermes' probe reads
// /proc/1/comm): under another init it says so, once, and runs on.
func TestCompatNotPID1Warns(t *testing.T) {
	p, code := runInit(t, initOpts{config: "compat: s6-overlay\nuser: root\nmain: {user: root}\n", notPID1: true, args: []string{"/bin/sh", "-c", "exit 3"}})
	if code != 3 {
		t.Errorf("exit %d, want main's 3", code)
	}
	want := "compat: s6-overlay needs hinit as PID 1 (it is pid "
	if n := strings.Count(p.stderr.String(), want); n != 1 {
		t.Errorf("the warning %q appears %d times, want once:\n%s", want, n, p.stderr)
	}
}

// A stderr nobody reads (docker's log driver stuck in its blocking mode, a
// collector that hangs) costs hinit's lines, never PID 1: once the pipe is
// full, a crash-looping service keeps hinit logging, and SIGTERM still
// shuts down with main's status. Before, hinit wrote its lines under a
// lock, and the loop's "shutting down" line blocked it for good.
func TestStalledStderrKeepsPID1(t *testing.T) {
	w := stalledPipe(t)
	cfg := "services:\n  crashy:\n    command: [/bin/sh, -c, 'exit 1']\n" +
		"    backoff: {initial: 10ms, max: 10ms}\n    give_up: {restarts: 1000, within: 1s}\n    log: {console: false}\n"
	p := startInit(t, initOpts{config: cfg, broken: w, args: []string{"sleep", "1000"}})
	testprog.WaitFor(t, 60*time.Second, "a thread of hinit blocked writing to the full pipe", func() bool {
		return blockedOnPipe(p.cmd.Process.Pid)
	})
	p.signal(syscall.SIGTERM)
	if code := p.wait(20 * time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want main's %d", code, 128+int(syscall.SIGTERM))
	}
}

// A broken stdout or stderr (docker logs' reader gone, `hinit ... | head`)
// costs the console copies and hinit's lines, never PID 1: the Go runtime
// ends a program whose write to fd 1 or 2 meets EPIPE with SIGPIPE unless
// the signal is caught, and as PID 1, where SIGPIPE cannot kill, with exit
// 2. Main's status stays the container's, bare (a -w warning) or not (a
// service's console copy).
func TestBrokenOutputKeepsPID1(t *testing.T) {
	for _, bare := range []bool{false, true} {
		t.Run(fmt.Sprintf("bare=%v", bare), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			defer w.Close()
			fifo := filepath.Join(testprog.PublicDir(t), "said")
			if err := unix.Mkfifo(fifo, 0o666); err != nil {
				t.Fatal(err)
			}
			o := initOpts{broken: w, bare: bare, args: []string{"/bin/sh", "-c", "read _ < " + fifo + "; exit 7"}}
			if bare {
				// An orphan hinit reaps with a -w warning on stderr; main
				// ends once it is reaped (its /proc entry gone).
				o.flags = []string{"-w"}
				o.args = []string{"/bin/sh", "-c", `p=$(sh -c 'true & echo $!'); while [ -e /proc/$p ]; do :; done; exit 7`}
			} else {
				o.config = "services:\n  talker: {command: [/bin/sh, -c, 'for i in 1 2 3; do echo line $i; done; echo > " + fifo + "; exec sleep 100'], log: {console: true}}\n"
			}
			p := startInit(t, o)
			if code := p.wait(10 * time.Second); code != 7 {
				t.Errorf("exit %d, want main's 7", code)
			}
		})
	}
}

// blockedOnPipe reports whether a thread of process pid waits to write to
// a full pipe.
// stalledPipe is the write end of a pipe whose read end stays open and is
// never read, until the test ends: writes block once it is full, as on a
// stdout whose reader is stuck (docker's log driver in its blocking mode).
func stalledPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return w
}

func blockedOnPipe(pid int) bool {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, task.Name()))
		if strings.Contains(string(b), "pipe_write") {
			return true
		}
	}
	return false
}
