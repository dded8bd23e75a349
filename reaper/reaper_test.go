package reaper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/childsig"
	"hinit/internal/testprog"
)

func TestMain(m *testing.M) {
	testprog.Main()
	if os.Getenv("REAPER_TEST_SEAL_WITHOUT_PROC") != "" {
		os.Exit(sealWithoutProc())
	}
	// The reaper collects every child of this process, so the tests use it
	// for all of theirs; as a subreaper it also collects orphans.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func newReaper(t *testing.T) *Reaper {
	t.Helper()
	r := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go r.Run(ctx)
	return r
}

func start(t *testing.T, r *Reaper, prog string, args ...string) (int, <-chan Status) {
	t.Helper()
	return startWith(t, r, nil, prog, args...)
}

// startWith is start with sys for the child (its process group, say).
func startWith(t *testing.T, r *Reaper, sys *syscall.SysProcAttr, prog string, args ...string) (int, <-chan Status) {
	t.Helper()
	argv := testprog.Command(prog, args...)
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	attr := &syscall.ProcAttr{
		Env:   append(os.Environ(), testprog.Env()),
		Files: []uintptr{devnull.Fd(), os.Stderr.Fd(), os.Stderr.Fd()},
		Sys:   sys,
	}
	pid, done, err := r.Start(argv[0], argv, attr, childsig.Inherited())
	if err != nil {
		t.Fatalf("start %s: %v", prog, err)
	}
	return pid, done
}

func recv(t *testing.T, done <-chan Status) Status {
	t.Helper()
	select {
	case st := <-done:
		return st
	case <-time.After(30 * time.Second):
		t.Fatal("no status within 30s")
		return Status{}
	}
}

// Every exit code 0..255 arrives intact, with all 256 processes alive at
// once so that their exits race each other.
func TestEveryExitCode(t *testing.T) {
	r := newReaper(t)
	dones := make([]<-chan Status, 256)
	for code := range dones {
		_, dones[code] = start(t, r, "exit", fmt.Sprint(code))
	}
	for code, done := range dones {
		if st := recv(t, done); st.Code != code || st.Signal != 0 || st.ExitStatus() != code {
			t.Errorf("exit %d reported as %+v", code, st)
		}
	}
}

func TestSignalledStatus(t *testing.T) {
	r := newReaper(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT} {
		_, done := start(t, r, "kill-self", fmt.Sprint(int(sig)))
		st := recv(t, done)
		if st.Signal != sig || st.ExitStatus() != 128+int(sig) {
			t.Errorf("kill-self %v reported as %+v (exit status %d)", sig, st, st.ExitStatus())
		}
	}
}

// A registered child's stop reaches Stops, with its signal, each time;
// its exit still reaches its own channel, once. Before, stops were never
// asked for (no WUNTRACED): a main stopped by a terminal's Ctrl-Z went
// unnoticed. The child has a process group of its own, as hinit's main
// does: in the test's, which is orphaned when the runner started the
// tests in a session of their own (setsid), the kernel drops SIGTSTP.
func TestStopsReported(t *testing.T) {
	r := newReaper(t)
	pid, done := startWith(t, r, &syscall.SysProcAttr{Setpgid: true}, "sleep", "30s")
	for _, sig := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGTSTP} {
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-r.Stops():
			if s != (Stop{PID: pid, Signal: sig}) {
				t.Errorf("stop %+v, want pid %d by %v", s, pid, sig)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no stop reported for %v", sig)
		}
		syscall.Kill(pid, syscall.SIGCONT)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	if st := recv(t, done); st.Signal != syscall.SIGKILL {
		t.Errorf("exit %+v, want SIGKILL", st)
	}
	select {
	case s := <-r.Stops():
		t.Errorf("a stop reported after the exit: %+v", s)
	default:
	}
}

// Without /proc (a chroot, bwrap) the descriptors hinit inherited are
// still listed, for main: each number is asked. Before, none were listed,
// all were sealed all the same, and main never got them (`tini -s -- sh -c
// 'echo x >&3' 3>out` wrote nothing).
func TestInheritedWithoutProc(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a mount namespace needs root")
	}
	var files []*os.File
	for range 2 {
		f, err := os.CreateTemp(t.TempDir(), "fd")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "REAPER_TEST_SEAL_WITHOUT_PROC=1")
	cmd.ExtraFiles = files // 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// (and what the test itself was started with, beyond 4)
	if s := string(out); !strings.HasPrefix(s, "[3 4]") && !strings.HasPrefix(s, "[3 4 ") {
		t.Errorf("listed %q without /proc, want 3 and 4 first", out)
	}
}

// sealWithoutProc, in a mount namespace of its own, unmounts /proc and
// prints what sealInherited lists.
func sealWithoutProc() int {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Println("private mounts:", err)
		return 1
	}
	for {
		if _, err := os.ReadDir("/proc/self/fd"); err != nil {
			break
		}
		if err := unix.Unmount("/proc", unix.MNT_DETACH); err != nil {
			fmt.Println("unmount /proc:", err)
			return 1
		}
	}
	fmt.Println(sealInherited(slog.New(slog.DiscardHandler)))
	return 0
}

// go-reaper#2/#11: with a wait4(-1) loop running, twenty registered
// children with distinct codes must each get their own status while
// hundreds of orphans are reaped around them.
func TestNoStatusLostToOrphanStorm(t *testing.T) {
	r := newReaper(t)
	_, storm := start(t, r, "orphans", "300", "0s")
	dones := make([]<-chan Status, 20)
	for i := range dones {
		_, dones[i] = start(t, r, "exit", fmt.Sprint(100+i))
	}
	if st := recv(t, storm); st.ExitStatus() != 0 {
		t.Fatalf("orphan spawner: %+v", st)
	}
	for i, done := range dones {
		if st := recv(t, done); st.Code != 100+i {
			t.Errorf("child %d: got %+v, want code %d", i, st, 100+i)
		}
	}
	testprog.WaitFor(t, 20*time.Second, "300 orphans reaped", func() bool { return r.Orphans() >= 300 })
	testprog.WaitFor(t, 10*time.Second, "no zombie children", func() bool { return zombies(t) == 0 })
}

func TestIdleWhenNoChildrenLeft(t *testing.T) {
	r := newReaper(t)
	_, done := start(t, r, "sleep", "50ms")
	select {
	case <-r.Idle():
		t.Fatal("idle while a child runs")
	default:
	}
	recv(t, done)
	select {
	case <-r.Idle():
	case <-time.After(10 * time.Second):
		t.Fatal("not idle after the last child exited")
	}
}

func TestStartError(t *testing.T) {
	r := newReaper(t)
	_, _, err := r.Start("/nonexistent/prog", []string{"prog"}, &syscall.ProcAttr{}, childsig.Inherited())
	if err != syscall.ENOENT {
		t.Fatalf("start of a missing program: %v, want ENOENT", err)
	}
}

// zombies counts this process's children in state Z.
func zombies(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n, me := 0, fmt.Sprint(os.Getpid())
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[0] == "Z" && f[1] == me {
			n++
		}
	}
	return n
}

// TestIgnoreTTYSignals: the reaper's process catches SIGTSTP and ignores
// SIGTTIN and SIGTTOU before, during and after starts, while every child
// starts with the three at their default, even with starts racing one
// another. SIGTSTP is never at its default meanwhile: a sampler reading
// this process's dispositions throughout the starts never sees it so
// (ignored, it was set to its default around each fork for the child, and
// a Ctrl-Z in that window stopped a hinit that is not PID 1).
func TestIgnoreTTYSignals(t *testing.T) {
	r := newReaper(t)
	r.IgnoreTTYSignals()
	self := func() string {
		b, _ := os.ReadFile("/proc/self/status")
		ign, ok1 := testprog.SigMask(string(b), "SigIgn")
		cgt, ok2 := testprog.SigMask(string(b), "SigCgt")
		if !ok1 || !ok2 {
			return "no SigIgn or SigCgt line"
		}
		tstp := "default"
		switch bit := uint64(1) << (syscall.SIGTSTP - 1); {
		case cgt&bit != 0:
			tstp = "caught"
		case ign&bit != 0:
			tstp = "ignored"
		}
		return fmt.Sprintf("TSTP=%s TTIN=%v TTOU=%v", tstp, ign&(1<<(syscall.SIGTTIN-1)) != 0, ign&(1<<(syscall.SIGTTOU-1)) != 0)
	}
	const want = "TSTP=caught TTIN=true TTOU=true"
	if got := self(); got != want {
		t.Fatalf("hinit's own dispositions after IgnoreTTYSignals: %s", got)
	}
	const n = 20
	outs := make(chan string, n)
	for range n {
		go func() {
			pr, pw, err := os.Pipe()
			if err != nil {
				outs <- err.Error()
				return
			}
			defer pr.Close()
			argv := testprog.Command("sigign")
			attr := &syscall.ProcAttr{Env: append(os.Environ(), testprog.Env()), Files: []uintptr{0, pw.Fd(), 2}}
			_, done, err := r.Start(argv[0], argv, attr, childsig.Inherited())
			pw.Close()
			if err != nil {
				outs <- err.Error()
				return
			}
			b, _ := io.ReadAll(pr)
			<-done
			outs <- strings.TrimSpace(string(b))
		}()
	}
	stop, sampled := make(chan struct{}), make(chan string, 1)
	go func() {
		seen := ""
		for {
			select {
			case <-stop:
				sampled <- seen
				return
			default:
			}
			if got := self(); strings.HasPrefix(got, "TSTP=default") && seen == "" {
				seen = got
			}
		}
	}()
	for range n {
		if got := <-outs; got != "none" {
			t.Errorf("a child ignores %s, want none", got)
		}
	}
	close(stop)
	if seen := <-sampled; seen != "" {
		t.Errorf("during the starts, hinit's own dispositions were once %s: SIGTSTP at its default", seen)
	}
	if got := self(); got != want {
		t.Errorf("hinit's own dispositions after the starts: %s", got)
	}
}

// TestStartSignals: a child starts with exactly the mask and the ignored
// signals it is given, whatever this process has: signals the Go runtime
// handles (SEGV, TERM, USR1) ignored through the shim, a mask through the
// forking thread, the clean state with neither; starts with different
// states race one another. A program that cannot be executed fails Start
// with the exec's errno, shim or not.
func TestStartSignals(t *testing.T) {
	r := newReaper(t)
	r.IgnoreTTYSignals()
	states := []childsig.State{
		{Ignored: childsig.Of(syscall.SIGINT, syscall.SIGSEGV, syscall.SIGUSR1, syscall.SIGTTOU),
			Blocked: childsig.Of(syscall.SIGTERM, syscall.SIGILL, syscall.SIGTTIN)},
		{Blocked: childsig.Of(syscall.SIGHUP, syscall.SIGUSR2)}, // no shim
		childsig.Default,
		{Ignored: childsig.Of(syscall.SIGTTIN)}, // no shim: the reaper sets TTIN itself
		{Ignored: childsig.Of(syscall.SIGTSTP)}, // nor TSTP
	}
	const rounds = 5
	type result struct {
		want childsig.State
		got  string
	}
	outs := make(chan result, rounds*len(states))
	for range rounds {
		for _, st := range states {
			go func() {
				pr, pw, err := os.Pipe()
				if err != nil {
					outs <- result{st, err.Error()}
					return
				}
				defer pr.Close()
				attr := &syscall.ProcAttr{Files: []uintptr{0, pw.Fd(), 2}}
				_, done, err := r.Start("/bin/cat", []string{"cat", "/proc/self/status"}, attr, st)
				pw.Close()
				if err != nil {
					outs <- result{st, err.Error()}
					return
				}
				b, _ := io.ReadAll(pr)
				<-done
				outs <- result{st, string(b)}
			}()
		}
	}
	for range rounds * len(states) {
		res := <-outs
		ign, blk := statusMask(res.got, "SigIgn"), statusMask(res.got, "SigBlk")
		if ign != res.want.Ignored || blk != res.want.Blocked {
			t.Errorf("child started with SigIgn %s, SigBlk %s; want %s and %s (%.60q)",
				ign, blk, res.want.Ignored, res.want.Blocked, res.got)
		}
	}
	for _, st := range states[:2] {
		if _, _, err := r.Start("/nonexistent/prog", []string{"prog"}, &syscall.ProcAttr{}, st); err != syscall.ENOENT {
			t.Errorf("Start of a missing program with %+v: %v, want ENOENT", st, err)
		}
	}
}

// statusMask reads a mask line of /proc/PID/status; all bits set when it
// is missing, which no test wants.
func statusMask(status, field string) childsig.Set {
	if m, ok := testprog.SigMask(status, field); ok {
		return childsig.Set(m)
	}
	return ^childsig.Set(0)
}

// TestShimEndedBeforeExec: a shim that ends before its exec (its own Go
// runtime could not make a thread under a pids limit: "fatal error:
// newosproc", exit 2) fails Start, which says so; here a script that
// exits 2 without its ready byte. Before, its end read as the program's
// exec, and its exit 2 as the program's: main's exit status, made up.
func TestShimEndedBeforeExec(t *testing.T) {
	crasher := filepath.Join(t.TempDir(), "crasher")
	if err := os.WriteFile(crasher, []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	oldExe := shimExe
	shimExe = crasher
	defer func() { shimExe = oldExe }()
	r := newReaper(t)
	shimmed := childsig.State{Ignored: childsig.Of(syscall.SIGUSR1)} // this process handles USR1: through the shim
	if _, _, err := r.Start("/bin/true", []string{"true"}, &syscall.ProcAttr{}, shimmed); !errors.Is(err, childsig.ErrShimEnded) {
		t.Errorf("Start through a shim that ended before its exec: %v, want %v", err, childsig.ErrShimEnded)
	}
}

// TestStoppedShim: a shim that never execs (its user stopped it: SIGSTOP
// needs no privilege over one's own process) blocks neither the reaper nor
// other starts, and its Start fails once shimTimeout has passed, the shim
// killed and reaped. Before, Start read the shim's pipe holding the lock
// the reaping loop takes: PID 1 stopped reaping and starting for good.
func TestStoppedShim(t *testing.T) {
	stopper := filepath.Join(t.TempDir(), "stopper")
	if err := os.WriteFile(stopper, []byte("#!/bin/sh\nkill -STOP $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	oldExe, oldTimeout := shimExe, shimTimeout
	shimExe, shimTimeout = stopper, 3*time.Second
	defer func() { shimExe, shimTimeout = oldExe, oldTimeout }()
	r := newReaper(t)

	shimmed := childsig.State{Ignored: childsig.Of(syscall.SIGUSR1)} // this process handles USR1: through the shim
	type result struct {
		pid int
		err error
	}
	first := make(chan result, 1)
	go func() {
		pid, _, err := r.Start("/bin/true", []string{"true"}, &syscall.ProcAttr{}, shimmed)
		first <- result{pid, err}
	}()
	var stopped int
	testprog.WaitFor(t, 10*time.Second, "the shim stopped", func() bool {
		stopped = stoppedChild()
		return stopped != 0
	})

	_, done, err := r.Start("/bin/true", []string{"true"}, &syscall.ProcAttr{}, childsig.Default)
	if err != nil {
		t.Fatalf("a start beside the stopped shim: %v", err)
	}
	if st := <-done; st.ExitStatus() != 0 {
		t.Errorf("/bin/true beside the stopped shim: %+v", st)
	}
	select {
	case res := <-first:
		t.Fatalf("the stopped shim's Start returned before its timeout: %+v", res)
	default:
	}

	res := <-first
	if res.err == nil || !strings.Contains(res.err.Error(), "did not exec the program within 3s") {
		t.Fatalf("the stopped shim's Start: pid %d, %v", res.pid, res.err)
	}
	testprog.WaitFor(t, 10*time.Second, "the shim killed and reaped", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		_, waiting := r.waiting[stopped]
		return !waiting
	})
}

// stoppedChild is the pid of a stopped child of this process, or 0.
func stoppedChild() int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, ...
		if len(f) > 1 && f[0] == "T" && f[1] == strconv.Itoa(os.Getpid()) {
			pid, _ := strconv.Atoi(strings.Fields(s)[0])
			return pid
		}
	}
	return 0
}
