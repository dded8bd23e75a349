package supervise

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/account"
	"hinit/config"
	"hinit/internal/testcg"
	"hinit/internal/testprog"
	"hinit/reaper"
)

func TestMain(m *testing.M) {
	testprog.Main()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(1)
	}
	// A descriptor inherited without close-on-exec, as a careless parent
	// of hinit may leave: no service may get it.
	if _, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0); err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

type fixture struct {
	t      *testing.T
	group  *Group
	mu     sync.Mutex
	env    map[string]string
	failed []string
	logged testprog.Buffer // hinit's log lines
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, env: map[string]string{"PATH": os.Getenv("PATH"), "HINIT_TESTPROG": "1"}}
	log := slog.New(slog.NewTextHandler(&f.logged, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		}}))
	ctx, cancel := context.WithCancel(context.Background())
	rp := reaper.New(log)
	go rp.Run(ctx)
	deps := &Deps{Spawner: rp, Log: log, Root: os.Getuid() == 0,
		Environ: func() map[string]string {
			f.mu.Lock()
			defer f.mu.Unlock()
			return maps(f.env)
		},
		Failed: func(name string, status int) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.failed = append(f.failed, fmt.Sprintf("%s:%d", name, status))
		},
	}
	f.group = NewGroup(ctx, deps)
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		f.group.Shutdown(sctx, time.Now().Add(5*time.Second))
		cancel()
	})
	return f
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// def is a service running a test program, with fast test defaults.
func def(name string, prog ...string) *config.Service {
	return &config.Service{
		Name: name, Source: "static", Command: testprog.Command(prog[0], prog[1:]...),
		Restart: config.RestartAlways,
		Backoff: config.Backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond, ResetAfter: 10 * time.Second},
		Stop:    config.Stop{Signal: "TERM", Timeout: 5 * time.Second},
	}
}

func (f *fixture) add(d *config.Service, up bool) *Service {
	f.t.Helper()
	s, err := f.group.Add(d, up)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func waitState(t *testing.T, s *Service, state State) Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	st, err := s.WaitFor(ctx, func(st Status) bool { return st.State == state })
	if err != nil {
		t.Fatalf("%s: waiting for %s: %v (now %+v)", s.Name(), state, err, st)
	}
	return st
}

func TestKilledServiceRestarts(t *testing.T) {
	f := newFixture(t)
	s := f.add(def("web", "sleep", "inf"), true)
	first := waitState(t, s, StateUp)
	syscall.Kill(first.PID, syscall.SIGKILL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := s.WaitFor(ctx, func(st Status) bool { return st.State == StateUp && st.PID != first.PID })
	if err != nil {
		t.Fatal(err)
	}
	if st.Restarts != 1 || st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL {
		t.Errorf("after kill -9: %+v", st)
	}
}

func TestRestartPolicy(t *testing.T) {
	tests := []struct {
		name      string
		restart   string
		noRestart []int
		code      string
		want      State // state after the first exit
	}{
		{"always, exit 0 listed as no-restart", config.RestartAlways, []int{0, 78}, "0", StateExited},
		{"always, exit 78 listed as no-restart", config.RestartAlways, []int{0, 78}, "78", StateExited},
		{"always, exit 1 restarts", config.RestartAlways, []int{0, 78}, "1", StateBackoff},
		{"on-failure, exit 0 stays down", config.RestartOnFailure, nil, "0", StateExited},
		{"on-failure, exit 3 restarts", config.RestartOnFailure, nil, "3", StateBackoff},
		{"never, exit 1 stays down", config.RestartNever, nil, "1", StateExited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			d := def("svc", "exit", tt.code)
			d.Restart, d.NoRestartExitCodes = tt.restart, tt.noRestart
			d.Backoff.Initial, d.Backoff.Max = time.Hour, time.Hour // hold it in backoff
			st := waitState(t, f.add(d, true), tt.want)
			if st.LastExit == nil || fmt.Sprint(st.LastExit.Code) != tt.code {
				t.Errorf("last exit %+v, want code %s", st.LastExit, tt.code)
			}
		})
	}
}

// no_restart_exit_codes are codes a process exits with: a death by a
// signal matches none of them, not even its 128+N (137 listed, SIGKILL
// still restarts), as docs/config.md says.
func TestNoRestartCodesNeverMatchASignal(t *testing.T) {
	f := newFixture(t)
	d := def("svc", "kill-self", "9")
	d.NoRestartExitCodes = []int{137}
	d.Backoff.Initial, d.Backoff.Max = time.Hour, time.Hour // hold it in backoff
	st := waitState(t, f.add(d, true), StateBackoff)
	if st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL || st.LastExit.Status() != 137 {
		t.Errorf("last exit %+v, want killed by SIGKILL, status 137", st.LastExit)
	}
}

// A crash loop backs off by doubling from initial to max, then gives up
// with its reason kept; a start request brings it back.
func TestCrashLoopBacksOffThenGivesUp(t *testing.T) {
	f := newFixture(t)
	d := def("crash", "exit", "3")
	d.Backoff.Initial, d.Backoff.Max = 50*time.Millisecond, 200*time.Millisecond
	d.GiveUp = config.GiveUp{Restarts: 5, Within: time.Minute}
	d.Essential = true
	s := f.add(d, true)
	st := waitState(t, s, StateFailed)
	var delays []string
	for _, l := range strings.Split(f.logged.String(), "\n") {
		if _, d, ok := strings.Cut(l, `msg="backing off" svc=crash delay=`); ok {
			delays = append(delays, d)
		}
	}
	if got := strings.Join(delays, " "); got != "50ms 100ms 200ms 200ms 200ms" {
		t.Errorf("backoff delays %q, want 50ms 100ms 200ms 200ms 200ms", got)
	}
	if want := "gave up after 5 restarts within 1m0s; last: exit 3"; st.Reason != want {
		t.Errorf("reason %q, want %q", st.Reason, want)
	}
	f.mu.Lock()
	if got := strings.Join(f.failed, ","); got != "crash:3" {
		t.Errorf("essential failure reported as %q, want crash:3", got)
	}
	f.mu.Unlock()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.State == StateFailed {
		t.Errorf("still failed after a start: %+v", st)
	}
}

// A service that ignores its stop signal is killed with its whole process
// group after stop.timeout.
func TestStopTimeoutKillsProcessGroup(t *testing.T) {
	f := newFixture(t)
	d := def("stubborn", "ignore-term", "3")
	d.Stop.Timeout = 100 * time.Millisecond
	d.Ready.NotifyFD = 3
	s := f.add(d, true)
	st := waitState(t, s, StateUp)
	if err := s.Stop(true); err != nil {
		t.Fatal(err)
	}
	down := waitState(t, s, StateDown)
	if down.LastExit == nil || down.LastExit.Signal != syscall.SIGKILL {
		t.Errorf("stop of a TERM-ignoring service ended with %+v, want SIGKILL", down.LastExit)
	}
	if err := syscall.Kill(-st.PID, 0); err != syscall.ESRCH {
		t.Errorf("process group %d still exists: %v", st.PID, err)
	}
}

// A container shutdown during a stop already under way never puts its
// SIGKILL off: it comes at the stop's own timeout (or the shutdown's
// deadline, when sooner). It was re-armed from the shutdown's moment:
// here 1.8 s after the stop instead of 1 s.
func TestShutdownKeepsAnOngoingStopsKill(t *testing.T) {
	f := newFixture(t)
	d := def("stubborn", "ignore-term", "3")
	d.Stop.Timeout = time.Second
	d.Ready.NotifyFD = 3
	s := f.add(d, true)
	waitState(t, s, StateUp)
	stopped := time.Now()
	if err := s.Stop(true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(800 * time.Millisecond) // the stop is under way when the shutdown comes
	go f.group.Shutdown(context.Background(), time.Now().Add(time.Minute))
	down := waitState(t, s, StateDown)
	if took := down.LastExit.At.Sub(stopped); took > 1500*time.Millisecond {
		t.Errorf("killed %v after the stop, want at its 1s timeout", took)
	}
}

func TestReadiness(t *testing.T) {
	addr := "127.0.0.1:" + fmt.Sprint(20000+os.Getpid()%20000)
	tests := []struct {
		name  string
		prog  []string
		ready config.Ready
	}{
		{"notify fd", []string{"notify", "3", "200ms"}, config.Ready{NotifyFD: 3}},
		{"tcp", []string{"listen", addr, "200ms"}, config.Ready{TCP: addr}},
		{"delay", []string{"sleep", "inf"}, config.Ready{Delay: 200 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			d := def("r", tt.prog...)
			d.Ready = tt.ready
			s := f.add(d, true)
			if st := waitState(t, s, StateStarting); st.Ready {
				t.Fatalf("right after spawn: %+v, want starting and not ready", st)
			}
			if st := waitState(t, s, StateUp); !st.Ready {
				t.Errorf("up but not ready: %+v", st)
			}
		})
	}
}

// The container environment is read again and ${VAR} expanded at every
// start; the service runs as its user with HOME, USER and LOGNAME to match.
func TestEnvAndUserAtEachStart(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to switch users")
	}
	f := newFixture(t)
	testprog.ExposeBinary(t)
	dir := testprog.PublicDir(t)
	d := def("who", "whoami")
	id := testprog.UnusedUID(t)
	d.User = fmt.Sprintf("%d:%d", id, id)
	d.Env = map[string]string{"GREETING": "${WORD:-hello}"}
	d.Log.Dir, d.Log.MaxSize, d.Log.Keep = filepath.Join(dir, "logs"), 1<<20, 2
	d.Restart = config.RestartNever
	s := f.add(d, true)
	waitState(t, s, StateExited)
	f.mu.Lock()
	f.env["WORD"] = "bonjour"
	f.mu.Unlock()
	s.Start()
	testprog.WaitFor(t, 10*time.Second, "second run logged", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "logs", "current"))
		return strings.Count(string(b), "GREETING=") == 2 // printed after the uid= line
	})
	t.Log(s.Status())
	b, _ := os.ReadFile(filepath.Join(dir, "logs", "current"))
	out := string(b)
	for _, want := range []string{fmt.Sprintf("uid=%[1]d gid=%[1]d groups=%[1]d cwd=/ HOME=/ USER=%[1]d LOGNAME=%[1]d", id),
		"GREETING=hello", "GREETING=bonjour"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// go-reaper#11: twenty services exit with distinct codes while one of them
// runs a thousand short children of its own; every code is reported right.
func TestDistinctExitCodesUnderChildStorm(t *testing.T) {
	f := newFixture(t)
	var svcs []*Service
	for i := range 20 {
		d := def(fmt.Sprintf("s%d", i), "exit", fmt.Sprint(100+i))
		if i == 0 {
			d = def("s0", "children", "1000", "100")
		}
		d.Restart = config.RestartNever
		svcs = append(svcs, f.add(d, true))
	}
	for i, s := range svcs {
		st := waitState(t, s, StateExited)
		if st.LastExit.Code != 100+i || st.LastExit.Signal != 0 {
			t.Errorf("%s: last exit %+v, want code %d", s.Name(), st.LastExit, 100+i)
		}
	}
}

func TestCannotExecute(t *testing.T) {
	f := newFixture(t)
	d := &config.Service{Name: "missing", Command: []string{"no-such-program-anywhere"}, Restart: config.RestartNever}
	st := waitState(t, f.add(d, true), StateExited)
	if st.LastExit.Code != 127 || !strings.Contains(st.Reason, `"no-such-program-anywhere": executable file not found`) {
		t.Errorf("missing program: %+v", st)
	}
}

// A notify fd past launch.MaxFD is a start error, before any descriptor
// is filled: config and s6dir refuse one, and a definition made elsewhere
// must not cost PID 1 a table of a million descriptors per start.
func TestNotifyFDPastMaxFD(t *testing.T) {
	f := newFixture(t)
	d := def("far", "sleep", "inf")
	d.Restart, d.Ready.NotifyFD = config.RestartNever, 1<<20
	st := waitState(t, f.add(d, true), StateExited)
	if want := "ready.notify_fd 1048576 is too large, expected at most 1023"; st.LastExit.Code != 126 || st.Reason != want {
		t.Errorf("notify fd 1<<20: %+v, want exit 126, %q", st, want)
	}
}

// TestLongStartErrorIsCapped (issue 14): a start error quotes the command,
// which a 64 KiB service.yaml can make 64 KiB long; the reason kept is cut.
func TestLongStartErrorIsCapped(t *testing.T) {
	f := newFixture(t)
	d := &config.Service{Name: "long", Command: []string{strings.Repeat("x", 60<<10)}, Restart: config.RestartNever}
	st := waitState(t, f.add(d, true), StateExited)
	if len(st.Reason) > 1024 || !strings.HasPrefix(st.Reason, `"xxx`) || !strings.HasSuffix(st.Reason, "more bytes)") {
		t.Errorf("reason of %d bytes: %.80q...", len(st.Reason), st.Reason)
	}
}

// TestWorkdirNotEnterable (issue 14): a workdir the service's user may not
// enter used to be reported as "exec ...: permission denied".
func TestWorkdirNotEnterable(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a service as another user")
	}
	f := newFixture(t)
	testprog.ExposeBinary(t)
	dir := filepath.Join(testprog.PublicDir(t), "private")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	id := testprog.UnusedUID(t)
	d := def("walled", "sleep", "inf")
	d.User, d.Workdir, d.Restart = fmt.Sprintf("%d:%d", id, id), dir, config.RestartNever
	st := waitState(t, f.add(d, true), StateExited)
	want := fmt.Sprintf("workdir %s: user %d cannot enter it: permission denied", dir, id)
	if st.LastExit.Code != 126 || st.Reason != want {
		t.Errorf("got exit %d, reason %q; want 126, %q", st.LastExit.Code, st.Reason, want)
	}
}

// Services never get the terminal: each leads its own session with stdin on
// /dev/null, and inherits no descriptor but 0, 1 and 2.
func TestServiceSessionAndDescriptors(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	d := def("sess", "session")
	d.Restart = config.RestartNever
	d.Log.Dir = dir
	waitState(t, f.add(d, true), StateExited)
	want := "session-leader=true group-leader=true stdin=/dev/null fds=0,1,2\n"
	testprog.WaitFor(t, 5*time.Second, want+" logged", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "current"))
		return strings.HasSuffix(string(b), want)
	})
}

// Once the container shuts down, nothing starts again and nothing new is
// added, whatever hsvc or the scandir ask.
func TestNoStartDuringShutdown(t *testing.T) {
	f := newFixture(t)
	s := f.add(def("web", "sleep", "inf"), true)
	waitState(t, s, StateUp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.group.Shutdown(ctx, time.Now().Add(5*time.Second))
	if err := s.Start(); err != ErrShuttingDown {
		t.Errorf("start during shutdown: %v, want ErrShuttingDown", err)
	}
	if _, err := f.group.Add(def("late", "sleep", "inf"), true); err != ErrClosed {
		t.Errorf("add during shutdown: %v, want ErrClosed", err)
	}
	if st := s.Status(); st.State != StateDown {
		t.Errorf("after shutdown: %+v", st)
	}
}

// An exit of restart_now_exit_codes (hermes' 75) restarts at once and is
// no step towards give_up: six such exits in a row, with give_up at two
// restarts a minute, never end "failed" or wait in backoff. A run shorter
// than backoff.initial waits that long first.
func TestRestartNowExitCodes(t *testing.T) {
	f := newFixture(t)
	d := def("tempfail", "exit", "75")
	d.RestartNowExitCodes = []int{75}
	d.Backoff.Initial = time.Nanosecond
	d.GiveUp = config.GiveUp{Restarts: 2, Within: time.Minute}
	s := f.add(d, true)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var seen []State
	st, err := s.WaitFor(ctx, func(st Status) bool {
		seen = append(seen, st.State)
		return st.Restarts >= 6
	})
	if err != nil {
		t.Fatalf("waiting for 6 restarts: %v (now %+v)", err, st)
	}
	s.Stop(false)
	for _, state := range seen {
		if state == StateFailed || state == StateBackoff {
			t.Errorf("exit 75 went through %q: states %v", state, seen)
			break
		}
	}

	quick := def("quick", "exit", "75")
	quick.RestartNowExitCodes = []int{75}
	quick.Backoff.Initial, quick.Backoff.Max = time.Hour, time.Hour
	st = waitState(t, f.add(quick, true), StateBackoff)
	if !strings.Contains(st.Reason, "exit 75 (restart requested) after") || !strings.HasSuffix(st.Reason, "restarting in 1h0m0s") {
		t.Errorf("a quick exit 75: reason %q", st.Reason)
	}
}

// A restart asked by a signal (s6-svc -t and -r; hermes gateway restart is
// s6-svc -t) starts the service again at once and is no failure: five in a
// row, with give_up at two restarts a minute and an hour of backoff, never
// wait or end "failed". Before, the gateway's exit 1 counted as a crash,
// and the third restart within a minute left it failed. A plain signal's
// exit is still a failure.
func TestSignalRestartIsNoFailure(t *testing.T) {
	f := newFixture(t)
	d := def("gw", "trap-term", "1")
	d.Backoff.Initial, d.Backoff.Max = time.Hour, time.Hour
	d.GiveUp = config.GiveUp{Restarts: 2, Within: time.Minute}
	s := f.add(d, true)
	st := waitState(t, s, StateUp)
	for i := range 5 {
		if err := s.SignalRestart(syscall.SIGTERM, true); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		next, err := s.WaitFor(ctx, func(n Status) bool {
			return n.State == StateUp && n.PID != st.PID || n.State == StateBackoff || n.State == StateFailed
		})
		cancel()
		if err != nil || next.State != StateUp {
			t.Fatalf("restart %d: %+v, %v; want up again at once", i+1, next, err)
		}
		st = next
	}
	if st.Restarts != 5 {
		t.Errorf("restarts %d, want 5", st.Restarts)
	}
	if err := s.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, s, StateBackoff); !strings.HasSuffix(st.Reason, "restarting in 1h0m0s") {
		t.Errorf("a plain SIGTERM's exit: reason %q, want the hour of backoff", st.Reason)
	}
}

// TestIgnoredRestartSignal: a restart signal the process ignores does not
// excuse a crash long after it (past the stop timeout): that exit backs
// off as any failure. It used to restart at once, uncounted.
func TestIgnoredRestartSignal(t *testing.T) {
	defer func(d time.Duration) { restartWindowFloor = d }(restartWindowFloor)
	restartWindowFloor = 0 // the window is the stop timeout, 50ms
	f := newFixture(t)
	d := def("gw", "ignore-term", "3")
	d.Ready.NotifyFD = 3 // up once TERM is ignored
	d.Backoff.Initial, d.Backoff.Max = time.Hour, time.Hour
	d.Stop.Timeout = 50 * time.Millisecond
	s := f.add(d, true)
	up := waitState(t, s, StateUp)
	if err := s.SignalRestart(syscall.SIGTERM, true); err != nil {
		t.Fatal(err)
	}
	// The window is time itself: the crash must come after it.
	time.Sleep(d.Stop.Timeout + 50*time.Millisecond)
	if err := s.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := s.WaitFor(ctx, func(n Status) bool { return n.PID != up.PID })
	if err != nil || st.State != StateBackoff || !strings.HasSuffix(st.Reason, "restarting in 1h0m0s") {
		t.Errorf("a crash after an ignored restart signal: %+v, %v; want the hour of backoff", st, err)
	}
}

// TestSlowRestartIsExcused: a restart signal is not killed after the stop
// timeout, so a tiny one (an s6 dir's timeout-kill of 1 ms) must not make a
// process that exits a little later (a shell trap's 0.2 s) a crash.
func TestSlowRestartIsExcused(t *testing.T) {
	f := newFixture(t)
	d := def("gw", "sleep", "inf")
	d.Command = []string{"/bin/sh", "-c", "trap 'sleep 0.2; exit 1' TERM; echo >&3; while :; do sleep 1000 & wait $!; done"}
	d.Ready.NotifyFD = 3 // up once the trap is set
	d.Backoff.Initial, d.Backoff.Max = time.Hour, time.Hour
	d.Stop.Timeout = time.Millisecond
	s := f.add(d, true)
	up := waitState(t, s, StateUp)
	if err := s.SignalRestart(syscall.SIGTERM, true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := s.WaitFor(ctx, func(n Status) bool { return n.PID != up.PID && n.PID != 0 || n.State == StateBackoff })
	if err != nil || st.State == StateBackoff || st.Restarts != 1 {
		t.Errorf("after a restart signal and a 0.2 s trap: %+v, %v; want started again at once", st, err)
	}
}

// FailingSince marks the start of a crash loop and keeps it across the
// flips between backoff and starting; a start request clears it.
func TestFailingSince(t *testing.T) {
	f := newFixture(t)
	d := def("crash", "exit", "3")
	d.GiveUp = config.GiveUp{Restarts: 3, Within: time.Minute}
	s := f.add(d, true)
	st := waitState(t, s, StateFailed)
	if st.FailingSince.IsZero() || !st.FailingSince.Before(st.Since) {
		t.Errorf("failed: FailingSince %v, Since %v; want the loop's start, before the give-up", st.FailingSince, st.Since)
	}
	if err := s.Stop(false); err != nil {
		t.Fatal(err)
	}
	steady := def("steady", "sleep", "inf")
	if st := waitState(t, f.add(steady, true), StateUp); !st.FailingSince.IsZero() {
		t.Errorf("a service that never failed: FailingSince %v", st.FailingSince)
	}
	s.Start()
	if st := s.Status(); !st.FailingSince.IsZero() && st.State != StateBackoff {
		t.Errorf("after a start: %+v", st)
	}
}

// TestLostLinesWhileUp (issue 14): lost_lines used to be read only at a
// change of state, so a service that stayed up while its lines were lost
// showed 0. Here `current` is a symlink, never followed: the line is lost.
func TestLostLinesWhileUp(t *testing.T) {
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	must(t, os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "current")))
	f := newFixture(t)
	d := def("chatty", "sleep", "inf")
	d.Command = []string{"/bin/sh", "-c", "read -r _ < " + filepath.Join(dir, "go") + "; echo lost; exec sleep 100000"}
	off := false
	d.Log = config.Log{Dir: dir, MaxSize: 1 << 20, Keep: 1, Console: &off}
	must(t, syscall.Mkfifo(filepath.Join(dir, "go"), 0o600))
	s := f.add(d, true)
	up := waitState(t, s, StateUp)
	if up.LostLines != 0 {
		t.Fatalf("lost %d lines before any was written", up.LostLines)
	}
	must(t, os.WriteFile(filepath.Join(dir, "go"), []byte("\n"), 0o600)) // the service prints its line now
	testprog.WaitFor(t, 10*time.Second, "lost_lines to reach 1 while the service is up", func() bool {
		st := s.Status()
		return st.LostLines == 1 && st.State == StateUp && st.PID == up.PID
	})
}

// A start or a stop while the process is stopping shows in the status at
// once: want up (it starts again once it has exited), then want down.
// Before, the runner changed what it wanted without publishing it, so
// status and hsvc wait read the old want until the process exited, and
// hinit recorded a gateway's desired state against a stale one.
func TestWantWhileStoppingIsShown(t *testing.T) {
	f := newFixture(t)
	d := def("svc", "ignore-term", "3")
	d.Ready.NotifyFD = 3 // up once TERM is ignored
	d.Stop.Timeout = 10 * time.Second
	s := f.add(d, true)
	up := waitState(t, s, StateUp)
	if err := s.Stop(true); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		do   func() error
		want Want
	}{{s.Start, WantUp}, {func() error { return s.Stop(true) }, WantDown}, {s.Start, WantUp}} {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		if st := s.Status(); st.State != StateStopping || st.Want != step.want {
			t.Fatalf("status %s want %s, expected stopping want %s", st.State, st.Want, step.want)
		}
	}
	if err := s.Stop(true); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(up.PID, syscall.SIGKILL) // not its stop timeout
	waitState(t, s, StateDown)
}

// s6-svc -o on a down service whose start fails: that failed start is its
// one run (s6: the exec's failure is the run), so it ends down, wanted
// down, as a run once that started and exited does, and nothing restarts
// it; an essential one does not end the container either way. It went to
// backoff wanted up, and the run that followed was restarted for ever, as
// after -u.
func TestStartOnceFailedStartIsTheRun(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name   string
		cmd    []string
		code   int
		reason string // a start that failed says why
	}{{"missing", []string{filepath.Join(t.TempDir(), "missing")}, 127, "no such file or directory"}, {"exits", []string{"/bin/sh", "-c", "exit 3"}, 3, "stopped"}} {
		d := def(tc.name, "sleep", "inf")
		d.Command, d.Essential = tc.cmd, true
		s := f.add(d, false)
		if err := s.StartOnce(); err != nil {
			t.Fatal(err)
		}
		st := waitState(t, s, StateDown)
		if st.Want != WantDown || st.Restarts != 0 || st.LastExit == nil || st.LastExit.Code != tc.code {
			t.Errorf("%s: after a start for one run: want %s, restarts %d, last exit %+v; want down, 0, %d",
				tc.name, st.Want, st.Restarts, st.LastExit, tc.code)
		}
		if !strings.Contains(st.Reason, tc.reason) {
			t.Errorf("%s: reason %q, want one saying %q", tc.name, st.Reason, tc.reason)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.failed) != 0 {
		t.Errorf("essential runs once ended the container: %v", f.failed)
	}
}

// The notify pipe is closed when its instance ends, even while a process
// the service left in a session of its own holds the write end. Before,
// the reader waited for EOF: a hermes service (notification-fd in its s6
// dir, or ready.notify_fd) that ran `setsid sleep &` and exited left PID 1
// one descriptor and one goroutine per restart, as many as it liked.
func TestNotifyPipeEndsWithItsInstance(t *testing.T) {
	f := newFixture(t)
	pidFile := filepath.Join(t.TempDir(), "orphan")
	d := def("leaver", "leave-fd", "3", pidFile)
	d.Restart, d.Ready.NotifyFD = config.RestartNever, 3
	waitState(t, f.add(d, true), StateExited)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	orphan := 0
	fmt.Sscan(string(b), &orphan)
	t.Cleanup(func() { syscall.Kill(orphan, syscall.SIGKILL) })
	pipe, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/3", orphan))
	if err != nil || !strings.HasPrefix(pipe, "pipe:") {
		t.Fatalf("the orphan's fd 3: %q, %v; want the notify pipe", pipe, err)
	}
	holds := func() bool {
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); target == pipe {
				return true
			}
		}
		return false
	}
	testprog.WaitFor(t, 5*time.Second, "hinit to close its end of "+pipe, func() bool { return !holds() })
}

// Removed services that ignore their stop signal, with a long
// stop.timeout: the group frees their names at once, and they used to
// hold PID 1's descriptors and goroutines for their whole timeout however
// many there were (hermes could make and remove scandir dirs of them in a
// loop). Beyond Deps.MaxStopping the oldest is killed at once, and the
// shutdown stops the rest.
func TestRemovedServicesStoppingAreBounded(t *testing.T) {
	f := newFixture(t)
	f.group.deps.MaxStopping = 2
	var removed []*Service
	for i := range 4 {
		d := def(fmt.Sprintf("s%d", i), "ignore-term", "3")
		d.Stop.Timeout = time.Hour
		d.Ready.NotifyFD = 3 // up once TERM is ignored
		s := f.add(d, true)
		waitState(t, s, StateUp)
		f.group.Remove(s.Name(), true)
		removed = append(removed, s)
	}
	for _, s := range removed[:2] { // the oldest two: killed when the third and the fourth were removed
		select {
		case <-s.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still running after more than 2 removed services were stopping: %+v", s.Name(), s.Status())
		}
		if st := s.Status(); st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL {
			t.Errorf("%s ended %+v, want SIGKILL", s.Name(), st.LastExit)
		}
	}
	for _, s := range removed[2:] {
		select {
		case <-s.Done():
			t.Errorf("%s: gone before its stop.timeout with only 2 stopping", s.Name())
		default:
		}
	}
	if !strings.Contains(f.logged.String(), "more than 2 removed services are still stopping") {
		t.Errorf("no warning logged: %s", f.logged.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.group.Shutdown(ctx, time.Now().Add(100*time.Millisecond))
	for _, s := range removed[2:] {
		if st := s.Status(); st.Running() || st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL {
			t.Errorf("%s after the shutdown: %+v, want ended by its SIGKILL at the deadline", s.Name(), st)
		}
	}
}

// shellService is a service that sh runs, whose trap writes "TERM" to mark
// and exits 0, once it has made ready. As one string (`command: "..."`),
// /bin/sh -c forks the program (dash does not exec the last command).
func shellService(name, prog, mark, ready string) *config.Service {
	d := def(name, "x")
	inner := fmt.Sprintf(`trap "echo TERM > %s; exit 0" TERM; touch %s; while :; do sleep 0.01; done`, mark, ready)
	d.Command = []string{"/bin/sh", "-c", fmt.Sprintf(prog, inner)}
	d.Stop.Timeout = 5 * time.Second
	return d
}

// A service that is a shell string gets its stop signal in the program
// the shell runs: what the stopped process leaves in its group gets the
// signal too, and the rest of the stop timeout. Before, the shell died of
// SIGTERM and its group got SIGKILL at once: the program never saw its
// stop signal, and `hsvc stop`, restarts and every container shutdown
// killed it.
func TestShellStringGetsStopSignal(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	mark, ready := filepath.Join(dir, "mark"), filepath.Join(dir, "ready")
	s := f.add(shellService("sh", `sh -c '%s'; :`, mark, ready), true)
	testprog.WaitFor(t, 10*time.Second, "the program's trap", func() bool { _, err := os.Stat(ready); return err == nil })
	start := time.Now()
	if err := s.Stop(true); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, StateDown)
	if b, _ := os.ReadFile(mark); string(b) != "TERM\n" {
		t.Errorf("the program's mark %q, want TERM: it never got its stop signal", b)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("stop took %v: the group waited for its SIGKILL", took)
	}
}

// A stopped service (SIGSTOP: paused by someone) gets SIGCONT after its
// stop signal, runs its handler and exits as it would. Before, the signal
// stayed pending until the timeout's SIGKILL.
func TestStoppedServiceContinuedToStop(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	mark, ready := filepath.Join(dir, "mark"), filepath.Join(dir, "ready")
	d := shellService("paused", `%s`, mark, ready)
	d.Stop.Timeout = 3 * time.Second
	s := f.add(d, true)
	testprog.WaitFor(t, 10*time.Second, "the trap", func() bool { _, err := os.Stat(ready); return err == nil })
	if err := syscall.Kill(s.Status().PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(true); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, s, StateDown)
	if st.LastExit == nil || st.LastExit.Signal != 0 || st.LastExit.Code != 0 {
		t.Errorf("last exit %+v, want 0: its handler ran", st.LastExit)
	}
}

// While a stopped shell string's group ends (its process reaped, what it
// left still stopping), status shows the exit it had, and a signal to its
// process is refused: its pid may be another's by now. The group still
// takes signals. Before, last_exit stayed empty until the group was gone,
// and a signal went to the reaped pid and answered OK.
func TestLingeringGroupShowsItsExit(t *testing.T) {
	f := newFixture(t)
	ready := filepath.Join(t.TempDir(), "ready")
	d := def("lingers", "x")
	d.Command = []string{"/bin/sh", "-c", fmt.Sprintf(`sh -c 'trap "" TERM; touch %s; while :; do sleep 0.01; done'; :`, ready)}
	d.Stop.Timeout = time.Minute
	s := f.add(d, true)
	testprog.WaitFor(t, 10*time.Second, "the program's trap", func() bool { _, err := os.Stat(ready); return err == nil })
	if err := s.Stop(true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	st, err := s.WaitFor(ctx, func(st Status) bool { return strings.HasPrefix(st.Reason, "exited;") })
	if err != nil {
		t.Fatalf("waiting for the group to linger: %v (now %+v)", err, st)
	}
	if st.State != StateStopping || st.LastExit == nil || st.LastExit.Signal != syscall.SIGTERM {
		t.Errorf("lingering: %s, last exit %+v; want stopping, the shell's SIGTERM", st.State, st.LastExit)
	}
	if err := s.SignalProcess(syscall.SIGHUP); !errors.Is(err, ErrProcessEnded) {
		t.Errorf("a signal to the reaped process: %v, want %v", err, ErrProcessEnded)
	}
	if err := s.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("a signal to the group: %v", err)
	}
	st = waitState(t, s, StateDown)
	if st.LastExit == nil || st.LastExit.Signal != syscall.SIGTERM {
		t.Errorf("down: last exit %+v, want the shell's SIGTERM", st.LastExit)
	}
}

// restart_now_exit_codes say how soon, not whether: restart: never (a
// gateway's own override of the template's [75]) stays exited. Before, the
// code restarted it, for ever.
func TestRestartNowUnderRestartNever(t *testing.T) {
	f := newFixture(t)
	d := def("nv", "exit", "75")
	d.Restart = config.RestartNever
	d.RestartNowExitCodes = []int{75}
	s := f.add(d, true)
	if st := waitState(t, s, StateExited); st.Restarts != 0 {
		t.Errorf("restarts %d, want 0", st.Restarts)
	}
}

// stuckGroup is a group whose planned-stop markers hang until the test
// ends (a hung $HERMES_HOME volume): entered is closed when the first
// marker write begins. cancel ends the services' goroutines, as
// pid1.shutdown's cancelSvcs does.
func stuckGroup(t *testing.T) (g *Group, entered chan struct{}, cancel context.CancelFunc) {
	var logged testprog.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	ctx, cancel := context.WithCancel(context.Background())
	rp := reaper.New(log)
	go rp.Run(ctx)
	entered, hung := make(chan struct{}), make(chan struct{})
	var once sync.Once
	deps := &Deps{Spawner: rp, Log: log, Root: os.Getuid() == 0,
		Environ: func() map[string]string { return map[string]string{"PATH": os.Getenv("PATH"), "HINIT_TESTPROG": "1"} },
		Marker: func(string, int, *account.Account) error {
			once.Do(func() { close(entered) })
			<-hung
			return nil
		}}
	t.Cleanup(func() { close(hung); cancel() })
	return NewGroup(ctx, deps), entered, cancel
}

// gateway is a service whose requested stop writes a planned-stop marker.
func gateway(t *testing.T, name string) *config.Service {
	d := def(name, "sleep", "inf")
	d.Stop.PlannedStopMarker = filepath.Join(t.TempDir(), "marker")
	return d
}

// shutDown shuts g down as pid1.shutdown does: the stop given up on at
// half the margin past deadline, the services' goroutines ended, then the
// wait for them until the margin's end. It returns what Wait named.
func shutDown(g *Group, cancel context.CancelFunc, deadline time.Time) []string {
	ctx, cancelWait := context.WithDeadline(context.Background(), deadline.Add(time.Second))
	defer cancelWait()
	stopCtx, cancelStop := context.WithDeadline(ctx, deadline.Add(500*time.Millisecond))
	defer cancelStop()
	g.Shutdown(stopCtx, deadline)
	cancel()
	return g.Wait(ctx)
}

// A service goroutine stuck in a step (here the planned-stop marker of a
// user's stop, on a hung volume) holds neither Group.Shutdown nor
// Group.Wait past their ctx, and Wait names it, and it alone: a service
// that stopped meanwhile is waited for. Before, both waited for the stuck
// one for ever, and hinit with them until docker's SIGKILL, main's exit
// status lost.
func TestShutdownGivesUpOnAStuckService(t *testing.T) {
	g, entered, cancel := stuckGroup(t)
	s, err := g.Add(gateway(t, "gw"), true)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := g.Add(def("ok", "sleep", "inf"), true)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, StateUp)
	waitState(t, ok, StateUp)
	go s.Stop(true) // a user's stop: the marker first
	<-entered
	if running := shutDown(g, cancel, time.Now().Add(100*time.Millisecond)); !slices.Equal(running, []string{"gw"}) {
		t.Errorf("Wait: %q still running, want [gw]", running)
	}
	select {
	case <-ok.Done():
	default:
		t.Error("the service that stopped was not waited for")
	}
}

// A service removed while its goroutine is stuck is still one Shutdown
// stops and Wait names. Before, Remove tracked it only once its goroutine
// had taken the removal: it dropped out of the shutdown, its process left
// to the sweep, its log unwaited for.
func TestRemovedWhileStuckIsWaitedFor(t *testing.T) {
	g, entered, cancel := stuckGroup(t)
	s, err := g.Add(gateway(t, "gw"), true)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, StateUp)
	go g.Remove("gw", true) // requested: the marker first
	<-entered
	if running := shutDown(g, cancel, time.Now().Add(100*time.Millisecond)); !slices.Equal(running, []string{"gw"}) {
		t.Errorf("Wait: %q still running, want [gw]", running)
	}
}

// Wait covers removed services still stopping, and returns once their
// goroutines have ended, logs closed; nothing once every one has. Before,
// the container's shutdown waited only for the services listed, and could
// exit while a removed gateway killed at the deadline still wrote its log.
func TestWaitCoversRemovedServices(t *testing.T) {
	f := newFixture(t)
	d := def("lingers", "ignore-term", "3")
	d.Stop.Timeout = 30 * time.Second
	d.Ready.NotifyFD = 3
	s := f.add(d, true)
	waitState(t, s, StateUp)
	f.group.Remove("lingers", true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.group.Shutdown(ctx, time.Now().Add(200*time.Millisecond))
	if running := f.group.Wait(ctx); running != nil {
		t.Fatalf("Wait: %q still running", running)
	}
	select {
	case <-s.Done():
	default:
		t.Error("Wait returned while the removed service's goroutine still ran")
	}
	if st := s.Status(); st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL {
		t.Errorf("the removed service ended %+v, want killed at the deadline", st.LastExit)
	}
}

// A run killed by a real-time signal says which: the reason read
// "killed by " with nothing after it.
func TestDescribeExitNamesEverySignal(t *testing.T) {
	for ex, want := range map[Exit]string{{Signal: syscall.SIGKILL}: "killed by SIGKILL", {Signal: 40}: "killed by SIGRTMIN+6",
		{Code: 3}: "exit 3"} {
		if got := describeExit(&ex); got != want {
			t.Errorf("describeExit(%+v) = %q, want %q", ex, got, want)
		}
	}
}

// A service the kernel's OOM killer ends is said to be out of memory; a
// SIGKILL from someone else, with no OOM kill counted since the service
// started, or from hinit itself (the stop timeout's, a signal asked of
// hinit, a stop signal of KILL), is not. The memory
// limit is a real cgroup's (root only).
func TestOOMKill(t *testing.T) {
	cg := testcg.Memory(t, 32<<20)
	f := newFixture(t)
	f.group.deps.Cgroup.OOMKills = cg.OOMKills
	stubborn := def("stubborn", "ignore-term", "3")
	stubborn.Ready.NotifyFD = 3
	stubborn.Stop.Timeout = 50 * time.Millisecond
	stubborn.Restart = config.RestartNever
	sb := f.add(stubborn, true)
	waitState(t, sb, StateUp)
	signalled := def("signalled", "sleep", "inf") // hsvc signal KILL, s6-svc -k
	signalled.Restart = config.RestartNever
	sg := f.add(signalled, true)
	waitState(t, sg, StateUp)
	killStop := def("kill-stop", "sleep", "inf") // stop: {signal: KILL}
	killStop.Stop.Signal = "KILL"
	ks := f.add(killStop, true)
	waitState(t, ks, StateUp)

	hog := def("hog", "hog", cg.Procs())
	hog.Restart = config.RestartNever
	st := waitState(t, f.add(hog, true), StateExited)
	if n, _ := cg.OOMKills(); st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL || !st.LastExit.OOM || n == 0 {
		t.Fatalf("hog ended %+v (%d OOM kills counted), want SIGKILL, out of memory", st.LastExit, n)
	}
	if want := "killed by SIGKILL, out of memory (the container's cgroup counted an OOM kill)"; !strings.Contains(st.Reason, want) {
		t.Errorf("hog's reason %q, want it to say %q", st.Reason, want)
	}
	if logged := f.logged.String(); !strings.Contains(logged, `msg="exited: killed by SIGKILL, out of memory`) {
		t.Errorf("hinit's log does not say hog ran out of memory:\n%s", logged)
	}

	// Up while the OOM kill was counted, killed by hinit at its stop timeout.
	if err := sb.Stop(true); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, sb, StateDown); st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL || st.LastExit.OOM {
		t.Errorf("stubborn, killed at its stop timeout, ended %+v; want SIGKILL, not out of memory", st.LastExit)
	}
	// Up while the OOM kill was counted, killed by hinit: asked to, or
	// by a stop signal of KILL.
	if err := sg.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, sg, StateExited); st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL || st.LastExit.OOM {
		t.Errorf("signalled, sent SIGKILL through hinit, ended %+v; want SIGKILL, not out of memory", st.LastExit)
	}
	if err := ks.Stop(true); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, ks, StateDown); st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL || st.LastExit.OOM {
		t.Errorf("kill-stop, stopped with its stop signal KILL, ended %+v; want SIGKILL, not out of memory", st.LastExit)
	}
	// Started after the OOM kill, killed by someone else.
	victim := def("victim", "sleep", "inf")
	victim.Restart = config.RestartNever
	v := f.add(victim, true)
	up := waitState(t, v, StateUp)
	syscall.Kill(up.PID, syscall.SIGKILL)
	if st := waitState(t, v, StateExited); st.LastExit == nil || st.LastExit.Signal != syscall.SIGKILL || st.LastExit.OOM {
		t.Errorf("victim, kill -9 with no OOM kill counted, ended %+v; want SIGKILL, not out of memory", st.LastExit)
	}
}

// A service that fails while the container's pids limit refuses it a
// fork is said to have met the limit, in its status and in hinit's log;
// one that fails with no refusal counted since it started is not, nor one
// that exits non-zero at its stop. The limit is a real cgroup's (root
// only).
func TestPidsLimit(t *testing.T) {
	cg := testcg.Pids(t, 1)
	f := newFixture(t)
	f.group.deps.Cgroup.PidsRefusals = cg.PidsRefusals
	stopper := def("stopper", "exit", "0")
	stopper.Command = []string{"/bin/sh", "-c", `trap "exit 3" TERM; echo >&3; while :; do sleep 1; done`}
	stopper.Ready.NotifyFD = 3
	sp := f.add(stopper, true)
	waitState(t, sp, StateUp)
	// It joins the group, where it is the one task allowed: the shell's
	// fork of /bin/true fails, and the shell exits 2.
	forks := def("forks", "exit", "0")
	forks.Command = []string{"/bin/sh", "-c", `echo $$$$ > "$$0" && /bin/true`, cg.Procs()} // $$ is a "$" for hinit
	forks.Restart = config.RestartNever
	st := waitState(t, f.add(forks, true), StateExited)
	if n, _ := cg.PidsRefusals(); st.LastExit == nil || st.LastExit.Code != 2 || !st.LastExit.PidsLimit || n == 0 {
		t.Fatalf("forks ended %+v (%d refusals counted), want exit 2, the pids limit", st.LastExit, n)
	}
	const said = "exit 2, the container's pids limit refused a new process or thread meanwhile"
	if !strings.Contains(st.Reason, said) {
		t.Errorf("forks' reason %q, want it to say %q", st.Reason, said)
	}
	if logged := f.logged.String(); !strings.Contains(logged, `msg="exited: `+said) {
		t.Errorf("hinit's log does not say forks met the pids limit:\n%s", logged)
	}
	// Up during the refusal, exit 3 at its stop.
	if err := sp.Stop(true); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, sp, StateDown); st.LastExit == nil || st.LastExit.Code != 3 || st.LastExit.PidsLimit {
		t.Errorf("stopper, exit 3 at its stop, ended %+v; want exit 3, not the pids limit", st.LastExit)
	}
	// Started after the refusal, failing on its own.
	fails := def("fails", "exit", "3")
	fails.Restart = config.RestartNever
	if st := waitState(t, f.add(fails, true), StateExited); st.LastExit == nil || st.LastExit.Code != 3 || st.LastExit.PidsLimit {
		t.Errorf("fails, exit 3 with no refusal counted, ended %+v; want exit 3, not the pids limit", st.LastExit)
	}
}

// A run that ends at a restart asked by a signal (s6-svc -r, hsvc signal
// --restart) answered hinit's signal: its exit code is not put down to the
// pids limit, whatever was refused meanwhile.
func TestPidsLimitNotBlamedForARestartSignal(t *testing.T) {
	var refusals atomic.Uint64
	f := newFixture(t)
	f.group.deps.Cgroup.PidsRefusals = func() (uint64, bool) { return refusals.Load(), true }
	d := def("graceful", "exit", "0")
	d.Command = []string{"/bin/sh", "-c", `trap "exit 143" TERM; echo >&3; while :; do sleep 1; done`}
	d.Ready.NotifyFD = 3
	s := f.add(d, true)
	first := waitState(t, s, StateUp).PID
	refusals.Add(1) // another process's fork refused while it runs
	if err := s.SignalRestart(syscall.SIGTERM, false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := s.WaitFor(ctx, func(st Status) bool { return st.State == StateUp && st.PID != first && st.LastExit != nil })
	if err != nil {
		t.Fatalf("not restarted: %v", err)
	}
	if st.LastExit.Code != 143 || st.LastExit.PidsLimit {
		t.Errorf("the run ended by the restart signal: %+v, want exit 143, not the pids limit", st.LastExit)
	}
}

// A start that fails while the pids limit refuses a process (the fork, or
// the start shim's threads) is said to have met the limit, as a run is.
// The count here rises between the mark and the judgement, as it does
// when the fork is what was refused.
func TestPidsLimitAtStart(t *testing.T) {
	var reads atomic.Uint64
	f := newFixture(t)
	f.group.deps.Cgroup.PidsRefusals = func() (uint64, bool) { return reads.Add(1) - 1, true }
	d := def("unstartable", "exit", "0")
	d.Command = []string{"/nonexistent/program"}
	d.Restart = config.RestartNever
	st := waitState(t, f.add(d, true), StateExited)
	if st.LastExit == nil || st.LastExit.Code != 127 || !st.LastExit.PidsLimit {
		t.Fatalf("unstartable ended %+v, want 127, the pids limit", st.LastExit)
	}
	if want := "the container's pids limit refused a new process or thread meanwhile"; !strings.Contains(st.Reason, want) {
		t.Errorf("reason %q, want it to say %q", st.Reason, want)
	}
}
