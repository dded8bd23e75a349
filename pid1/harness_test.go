package pid1

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"hinit/hsvc"
	"hinit/internal/testprog"
)

// The test binary is also hinit (HINIT_TEST_AS_INIT=1) and every helper
// program (testprog), so the tests run real processes in real PID
// namespaces without building anything first.
// awaitShutdownRequest holds the boot before main's start until a
// shutdown request is waiting (at most 10 s), as one that came first does.
func awaitShutdownRequest(h *hinit) {
	for end := time.Now().Add(10 * time.Second); len(h.stopRequest) == 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
}

func TestMain(m *testing.M) {
	testprog.Main()
	if os.Getenv("HINIT_TEST_AS_HSVC") == "1" {
		os.Exit(hsvc.Main(os.Args[2:], os.Stdout, os.Stderr))
	}
	if os.Getenv("HINIT_TEST_SIGCONF") == "1" {
		os.Unsetenv("HINIT_TEST_SIGCONF")
		os.Exit(sigconf(os.Args[1:]))
	}
	if os.Getenv("HINIT_TEST_SUBREAPER_PROXY") == "1" {
		os.Unsetenv("HINIT_TEST_SUBREAPER_PROXY")
		os.Exit(subreaperProxy(os.Args[1:]))
	}
	if os.Getenv("HINIT_TEST_AS_INIT") == "1" {
		os.Unsetenv("HINIT_TEST_AS_INIT")
		if os.Getenv("HINIT_TEST_MOUNT_PROC") == "1" {
			os.Unsetenv("HINIT_TEST_MOUNT_PROC")
			// A private /proc of the new PID namespace, as docker gives.
			if err := unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
				fmt.Fprintln(os.Stderr, "mount private:", err)
				os.Exit(111)
			}
			if err := unix.Mount("proc", "/proc", "proc", 0, ""); err != nil {
				fmt.Fprintln(os.Stderr, "mount proc:", err)
				os.Exit(111)
			}
			if opts := os.Getenv("HINIT_TEST_TMPFS_RUN"); opts != "" {
				os.Unsetenv("HINIT_TEST_TMPFS_RUN")
				if err := unix.Mount("tmpfs", "/run", "tmpfs", 0, opts); err != nil {
					fmt.Fprintln(os.Stderr, "mount /run:", err)
					os.Exit(111)
				}
			}
		}
		if os.Getenv("HINIT_TEST_MAIN_AFTER_REQUEST") == "1" {
			os.Unsetenv("HINIT_TEST_MAIN_AFTER_REQUEST")
			beforeMain = awaitShutdownRequest
		}
		os.Exit(Main(os.Args))
	}
	os.Exit(m.Run())
}

// initOpts says how to start hinit for a test.
type initOpts struct {
	config   string   // hinit.yaml; "" = none (built-in defaults)
	args     []string // the container's CMD
	env      []string // extra environment
	notPID1  bool     // run without a PID namespace: hinit is a subreaper
	cred     *syscall.Credential
	tty      *os.File // when set: stdin, stdout and stderr, as controlling terminal
	noTestEn bool     // leave HINIT_TESTPROG out of the config env
	dropCaps string   // capabilities taken from hinit's bounding set, for setpriv: "-kill"
	as       string   // run hinit through a symlink of this name ("tini")
	flags    []string // hinit's options, before the "--" that precedes args
	bare     bool     // no hinit.yaml and no HINIT_* variables: the bare mode
	wrap     []string // a parent to start hinit with: wrap + hinit's command line
	tmpfsRun string   // as PID 1: a private tmpfs on /run, as docker gives, with these options ("mode=755")
	broken   *os.File // hinit's stdout and stderr instead of buffers
}

// initProc is a running hinit.
type initProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	dir    string
	stdout *testprog.Buffer
	stderr *testprog.Buffer
	done   chan struct{}
	code   int
	// wrapped: cmd is a parent of hinit (initOpts.wrap), not hinit
	wrapped bool
}

// startInit starts the test binary as hinit, by default as PID 1 of new
// PID and mount namespaces.
func startInit(t *testing.T, o initOpts) *initProc {
	t.Helper()
	if os.Getuid() != 0 && !o.notPID1 {
		t.Skip("PID namespaces need root")
	}
	dir := testprog.PublicDir(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HINIT_TEST_AS_INIT=1"}
	if o.bare {
		if _, err := os.Stat(DefaultConfig); err == nil {
			t.Skipf("%s exists here: no bare mode", DefaultConfig)
		}
	} else {
		env = append(env,
			"HINIT_RUNTIME_DIR="+filepath.Join(dir, "run"),
			"HINIT_SCANDIR="+filepath.Join(dir, "service"),
			"HINIT_CONFIG="+filepath.Join(dir, "hinit.yaml"))
		cfg := o.config
		if !o.noTestEn {
			cfg = "env: {HINIT_TESTPROG: \"1\"}\n" + cfg
		}
		if err := os.WriteFile(filepath.Join(dir, "hinit.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	self := testprog.Command("x")[0]
	if o.as != "" {
		link := filepath.Join(dir, "bin", o.as)
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink(self, link); err != nil {
			t.Fatal(err)
		}
		self = link
	}
	p := &initProc{t: t, dir: dir, stdout: new(testprog.Buffer), stderr: new(testprog.Buffer), done: make(chan struct{})}
	line := append(append(slices.Clone(o.flags), "--"), o.args...)
	p.cmd = exec.Command(self, line...)
	if len(o.wrap) > 0 {
		p.cmd = exec.Command(o.wrap[0], append(append(o.wrap[1:], self), line...)...)
		p.wrapped = true
	}
	if o.dropCaps != "" {
		p.cmd = exec.Command("setpriv", append([]string{"--bounding-set=" + o.dropCaps, self, "--"}, o.args...)...)
	}
	p.cmd.Env = append(env, o.env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if o.broken != nil {
		p.cmd.Stdout, p.cmd.Stderr = o.broken, o.broken
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: o.cred}
	if !o.notPID1 {
		p.cmd.Env = append(p.cmd.Env, "HINIT_TEST_MOUNT_PROC=1")
		if o.tmpfsRun != "" {
			p.cmd.Env = append(p.cmd.Env, "HINIT_TEST_TMPFS_RUN="+o.tmpfsRun)
		}
		p.cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
	}
	if o.tty != nil {
		p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = o.tty, o.tty, o.tty
		p.cmd.SysProcAttr.Setsid, p.cmd.SysProcAttr.Setctty, p.cmd.SysProcAttr.Ctty = true, true, 0
	}
	if err := p.cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
			t.Skipf("kernel refuses new PID namespaces here: %v", err)
		}
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.code = 128 + int(ws.Signal())
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("hinit stdout:\n%s\nhinit stderr:\n%s", p.stdout, p.stderr)
		}
	})
	return p
}

// wait returns hinit's exit status, failing the test after d.
func (p *initProc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		p.t.Fatalf("hinit still running after %v", d)
		return -1
	}
}

func (p *initProc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// waitOutput waits until stdout (or stderr, with fromErr) contains s.
func (p *initProc) waitOutput(s string, fromErr bool) {
	p.t.Helper()
	buf := p.stdout
	if fromErr {
		buf = p.stderr
	}
	testprog.WaitFor(p.t, 15*time.Second, fmt.Sprintf("%q in output", s), func() bool {
		return strings.Contains(buf.String(), s)
	})
}

// runInit runs hinit to its end and returns its exit status.
func runInit(t *testing.T, o initOpts) (*initProc, int) {
	t.Helper()
	p := startInit(t, o)
	return p, p.wait(30 * time.Second)
}

// prog is a YAML flow list running a test program.
func prog(name string, args ...string) string {
	var q []string
	for _, a := range testprog.Command(name, args...) {
		q = append(q, fmt.Sprintf("%q", a))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// hsvc runs the test binary as hsvc against this hinit, as root or with
// cred, and returns its exit code, stdout and stderr.
func (p *initProc) hsvc(cred *syscall.Credential, args ...string) (int, string, string) {
	p.t.Helper()
	self := testprog.Command("x")[0]
	cmd := exec.Command(self, append([]string{"hsvc"}, args...)...)
	// GORACE: a race-enabled binary otherwise sleeps a second at exit,
	// which would hide how fast hsvc answered.
	cmd.Env = []string{"HINIT_TEST_AS_HSVC=1", "HINIT_RUNTIME_DIR=" + filepath.Join(p.dir, "run"), "GORACE=atexit_sleep_ms=0"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		p.t.Fatalf("hsvc %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// subreaperProxy runs argv as a child of a child subreaper, as tini's
// subreaper-proxy.py does, and exits with its status.
func subreaperProxy(argv []string) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper proxy:", err)
		return 111
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Run()
	return cmd.ProcessState.ExitCode()
}

// envProg is a test program run with the variable that makes the test
// binary one: the bare mode gives main hinit's environment only.
func envProg(name string, args ...string) []string {
	return append([]string{"/usr/bin/env", testprog.Env()}, testprog.Command(name, args...)...)
}

// sigconf runs argv with SIGINT, SIGTTOU and SIGSEGV ignored and SIGTTIN,
// SIGILL and SIGTERM blocked, as tini's sigconf-test.c does: a nohup or CI
// runner's set-up that the init is to pass on to its main.
func sigconf(argv []string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTTOU)
	runtime.LockOSThread()
	var set unix.Sigset_t
	for _, s := range []syscall.Signal{syscall.SIGTTIN, syscall.SIGILL, syscall.SIGTERM} {
		set.Val[(s-1)/64] |= 1 << ((uint(s) - 1) % 64)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		fmt.Fprintln(os.Stderr, "sigconf: block:", err)
		return 111
	}
	// The Go runtime holds SIGSEGV: ignore it in the kernel's table, the
	// last thing before exec.
	ign := struct{ handler, flags, restorer, mask uint64 }{handler: 1}
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(syscall.SIGSEGV),
		uintptr(unsafe.Pointer(&ign)), 0, 8, 0, 0); e != 0 {
		fmt.Fprintln(os.Stderr, "sigconf: ignore SIGSEGV:", e)
		return 111
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintln(os.Stderr, "sigconf: exec:", err)
	return 111
}
