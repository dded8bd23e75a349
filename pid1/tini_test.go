package pid1

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hinit/childsig"
	"hinit/internal/testprog"

	"golang.org/x/sys/unix"
)

// hinit as tini (SPEC §7), through a symlink named tini, tried with tini's
// own acceptance suite (tini's run_inner_tests.py).

// -e N for every code: inclusive (-e N, exit N gives 0) and exclusive
// (every other code given, exit N gives N). Before issue 12, -e was
// dropped: exit 143 stayed 143.
func TestTiniExpectEveryCode(t *testing.T) {
	var wg sync.WaitGroup
	codes := make(chan int)
	for range 4 {
		wg.Go(func() {
			for code := range codes {
				sh := []string{"/bin/sh", "-c", fmt.Sprintf("exit %d", code)}
				if _, got := runInit(t, initOpts{as: "tini", bare: true, notPID1: true, flags: []string{"-e", strconv.Itoa(code)}, args: sh}); got != 0 {
					t.Errorf("tini -e %d, exit %d: %d, want 0", code, code, got)
				}
				var others []string
				for c := range 256 {
					if c != code {
						others = append(others, "-e", strconv.Itoa(c))
					}
				}
				if _, got := runInit(t, initOpts{as: "tini", bare: true, notPID1: true, flags: others, args: sh}); got != code {
					t.Errorf("tini with the 255 other -e, exit %d: %d", code, got)
				}
			}
		})
	}
	for code := range 256 {
		codes <- code
	}
	close(codes)
	wg.Wait()
}

// -g and TINI_KILL_PROCESS_GROUP: a SIGUSR1 to hinit ends a main that
// ignores USR1 through its child, which does not (tini's pgroup test).
// Before issue 12 the signal only reached main, and nothing ended.
func TestTiniProcessGroup(t *testing.T) {
	main := []string{"/bin/sh", "-c", `trap "" USR1; (trap - USR1; echo ready; exec sleep 100) & wait $!; exit $?`}
	tests := []struct {
		name string
		o    initOpts
	}{
		{"tini -g", initOpts{as: "tini", flags: []string{"-g"}}},
		{"tini with TINI_KILL_PROCESS_GROUP", initOpts{as: "tini", env: []string{"TINI_KILL_PROCESS_GROUP=1"}}},
		{"hinit -g as PID 1", initOpts{flags: []string{"-g"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.bare, o.args = true, main
			o.notPID1 = o.as != ""
			p := startInit(t, o)
			p.waitOutput("ready", false)
			p.signal(syscall.SIGUSR1)
			if code := p.wait(10 * time.Second); code != 128+int(syscall.SIGUSR1) {
				t.Errorf("exit %d, want %d (main's child killed by SIGUSR1)", code, 128+int(syscall.SIGUSR1))
			}
		})
	}
}

// -p SIGUSR1: when hinit's parent dies, main gets SIGUSR1, and hinit then
// shuts down (main gets TERM). Before issue 12, -p was dropped. Main waits
// for both: sent one after the other, they may reach its threads in either
// order (with signals, which ends at TERM, 1 run in about 150 under load
// never printed USR1).
func TestTiniParentDeathSignal(t *testing.T) {
	p := startInit(t, initOpts{as: "tini", bare: true, notPID1: true, flags: []string{"-s", "-p", "SIGUSR1"},
		wrap: []string{"/bin/sh", "-c", `"$@" & wait`, "sh"}, args: envProg("signals-all", "SIGUSR1", "SIGTERM")})
	p.waitOutput("ready", false)
	killTreeAtEnd(t, p.hinitPID()) // hinit outlives its parent; a failed test leaves nothing behind
	p.signal(syscall.SIGKILL)      // hinit's parent
	p.waitOutput("got SIGUSR1", false)
	p.waitOutput("got SIGTERM", false)
	p.wait(15 * time.Second) // main and hinit gone: nobody holds stdout
}

// As PID 1, -p does nothing until the signal comes: main runs to its end.
// Before, hinit could not see its parent, took it for dead at boot and
// sent itself the signal: main got SIGUSR1, then a shutdown.
func TestTiniParentDeathSignalAsPID1(t *testing.T) {
	fifo := filepath.Join(testprog.PublicDir(t), "go")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startInit(t, initOpts{as: "tini", bare: true, flags: []string{"-p", "SIGUSR1"},
		args: []string{"/bin/sh", "-c", "echo ready; read _ < " + fifo + "; exit 4"}})
	p.waitOutput("ready", false)
	// Held open read-write: the line waits in the FIFO for main's read,
	// which a USR1 would have ended with 138.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.WriteString("go\n")
	if code := p.wait(10 * time.Second); code != 4 {
		t.Errorf("exit %d, want main's 4", code)
	}
}

// -p's signal is a shutdown request, with its deadline, also when it is
// the SIGTERM a bare hinit otherwise waits out for as long as main takes
// (settings.waitMain): as PID 1, every SIGTERM is then the parent's death,
// and a main that ignores it is killed at the (default) deadline.
func TestTiniParentDeathTERMHasTheDeadline(t *testing.T) {
	p := startInit(t, initOpts{as: "tini", bare: true, flags: []string{"-v", "-v", "-p", "SIGTERM"},
		args: []string{"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"}})
	p.waitOutput("ready", false)
	start := time.Now()
	p.signal(syscall.SIGTERM)
	code := p.wait(30 * time.Second)
	if took := time.Since(start); code != 137 || took < DefaultShutdownTimeout {
		t.Errorf("exit %d after %v, want 137 at the %v deadline", code, took, DefaultShutdownTimeout)
	}
	if s := p.stderr.String(); !strings.Contains(s, "shutting down: hinit's parent died (SIGTERM)") || strings.Contains(s, "waiting for main") {
		t.Errorf("stderr %q, want the parent's death, with its deadline", s)
	}
}

// Reaping and signals in tini's three non-PID-1 set-ups: under a subreaper
// parent, with -s, and with TINI_SUBREAPER. Orphans of main are reaped,
// and TERM, USR1 and USR2 to hinit end a main that does not catch them
// with 128+N.
func TestTiniSubreaperSetups(t *testing.T) {
	self := testprog.Command("x")[0]
	setups := []initOpts{
		{wrap: []string{"/usr/bin/env", "HINIT_TEST_SUBREAPER_PROXY=1", self}},
		{flags: []string{"-s"}},
		{env: []string{"TINI_SUBREAPER="}},
	}
	for i, setup := range setups {
		setup.as, setup.bare, setup.notPID1 = "tini", true, true
		t.Run(fmt.Sprintf("setup %d reaping", i), func(t *testing.T) {
			o := setup
			o.flags = append(o.flags, "-w")
			o.args = envProg("reaped", "20")
			p, code := runInit(t, o)
			if code != 0 || !strings.Contains(p.stdout.String(), "no zombies") {
				t.Errorf("exit %d, stdout %q", code, p.stdout)
			}
			if n := strings.Count(p.stderr.String(), "reaped zombie process with pid="); n != 20 {
				t.Errorf("-w: %d warnings for 20 orphans:\n%s", n, p.stderr)
			}
		})
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2} {
			t.Run(fmt.Sprintf("setup %d %v", i, sig), func(t *testing.T) {
				o := setup
				o.args = []string{"/bin/sh", "-c", "echo ready; exec sleep 100"}
				p := startInit(t, o)
				p.waitOutput("ready", false)
				syscall.Kill(p.hinitPID(), sig)
				if code := p.wait(10 * time.Second); code != 128+int(sig) {
					t.Errorf("exit %d, want %d", code, 128+int(sig))
				}
			})
		}
	}
}

// hinitPID is hinit's pid: the started process, or its child when a
// wrapper started it. The kernel lists a child under the thread that
// forked it, which for a Go wrapper is any of its threads: all are read.
func (p *initProc) hinitPID() int {
	pid := p.cmd.Process.Pid
	if !p.wrapped {
		return pid
	}
	var children []string
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		children = append(children, strings.Fields(string(b))...)
	}
	if len(children) == 1 {
		if c, err := strconv.Atoi(children[0]); err == nil {
			return c
		}
	}
	p.t.Fatalf("no single child of the wrapper %d: %q", pid, children)
	return 0
}

// Main, the services and the boot hooks start with the ignored signals and
// the signal mask hinit inherited, exactly (tini's sigconf test): SIGINT,
// SIGTTOU and SIGSEGV ignored, SIGTTIN, SIGILL and SIGTERM blocked, nothing
// else; a service with signals: default starts with neither. Before
// childsig, main got SIGSEGV back at its default and SIGILL and SIGTERM
// unblocked.
func TestInheritedSignals(t *testing.T) {
	self := testprog.Command("x")[0]
	wantIgn := uint64(childsig.Of(syscall.SIGINT, syscall.SIGTTOU, syscall.SIGSEGV))
	wantBlk := uint64(childsig.Of(syscall.SIGTTIN, syscall.SIGILL, syscall.SIGTERM))
	tests := []struct {
		name             string
		o                initOpts
		prefix           string // of the lines of /proc/self/status in hinit's stdout
		wantIgn, wantBlk uint64
	}{
		{"main of a bare tini", initOpts{as: "tini", bare: true, flags: []string{"-s"}, args: []string{"/bin/cat", "/proc/self/status"}}, "",
			wantIgn, wantBlk},
		{"a service", initOpts{config: "services:\n  st: {command: [/bin/cat, /proc/self/status], restart: never}\n",
			args: []string{"/bin/sh", "-c", "exec sleep 100"}}, "[st] ", wantIgn, wantBlk},
		{"a service with signals: default", initOpts{config: "services:\n  st: {command: [/bin/cat, /proc/self/status], restart: never, signals: default}\n",
			args: []string{"/bin/sh", "-c", "exec sleep 100"}}, "[st] ", 0, 0},
	}
	for _, tt := range tests {
		o := tt.o
		o.notPID1 = true
		o.wrap = []string{"/usr/bin/env", "HINIT_TEST_SIGCONF=1", self}
		t.Run(tt.name, func(t *testing.T) {
			p := startInit(t, o)
			p.waitOutput(tt.prefix+"SigBlk:", false)
			// A service's test stops main with SIGUSR1, which hinit
			// forwards and main neither blocks nor ignores (main blocks
			// SIGTERM, so that would wait for the stop timeout).
			syscall.Kill(p.cmd.Process.Pid, syscall.SIGUSR1)
			p.wait(10 * time.Second)
			var status strings.Builder
			for _, l := range strings.Split(p.stdout.String(), "\n") {
				if rest, ok := strings.CutPrefix(l, tt.prefix); ok {
					status.WriteString(rest + "\n")
				}
			}
			if ign := sigField(t, status.String(), "SigIgn"); ign != tt.wantIgn {
				t.Errorf("SigIgn %016x, want %016x", ign, tt.wantIgn)
			}
			if blk := sigField(t, status.String(), "SigBlk"); blk != tt.wantBlk {
				t.Errorf("SigBlk %016x, want %016x", blk, tt.wantBlk)
			}
		})
	}
}

// sigField reads a hex mask line of /proc/PID/status.
func sigField(t *testing.T, status, field string) uint64 {
	t.Helper()
	m, ok := testprog.SigMask(status, field)
	if !ok {
		t.Fatalf("no %s in %q", field, status)
	}
	return m
}

// killTreeAtEnd kills pid and its descendants with SIGKILL when the test
// ends, before the harness waits for the output pipe they hold.
func killTreeAtEnd(t *testing.T, pid int) {
	t.Cleanup(func() {
		queue := []int{pid}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p, p))
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					queue = append(queue, c)
				}
			}
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
}

// Not PID 1, a bare hinit exits with main's status as soon as main is
// reaped, and leaves what main put in the background running, as tini -s
// does: it goes on under the next subreaper or init. Before, hinit sent it
// TERM, and KILL at HINIT_SHUTDOWN_TIMEOUT.
func TestTiniLeavesBackgroundAlone(t *testing.T) {
	p := startInit(t, initOpts{as: "tini", bare: true, notPID1: true, flags: []string{"-s"},
		args: []string{"/bin/sh", "-c", "sleep 1234 >/dev/null 2>&1 & echo bg=$!; exit 5"}})
	if code := p.wait(10 * time.Second); code != 5 {
		t.Fatalf("exit %d, want main's 5", code)
	}
	var bg int
	for _, f := range strings.Fields(p.stdout.String()) {
		if v, ok := strings.CutPrefix(f, "bg="); ok {
			bg, _ = strconv.Atoi(v)
		}
	}
	if bg <= 0 {
		t.Fatalf("no background pid in %q", p.stdout)
	}
	defer syscall.Kill(bg, syscall.SIGKILL)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", bg))
	if f := strings.Fields(string(b)); err != nil || len(f) < 3 || f[2] == "Z" || !strings.Contains(f[1], "sleep") {
		t.Fatalf("the background sleep is gone after hinit's exit: %q %v", b, err)
	}
}

// A bare hinit also forwards the STOPSIGNALs images use beyond the six of
// a configured hinit: SIGPWR and SIGRTMIN+3 (systemd's). Before, the Go
// runtime swallowed them: docker stop reached main only as SIGKILL.
func TestTiniForwardsStopSignals(t *testing.T) {
	sigs := []syscall.Signal{syscall.SIGPWR, 37, syscall.SIGUSR2}
	var script strings.Builder
	for _, s := range sigs {
		fmt.Fprintf(&script, "trap 'echo got %d' %d; ", s, s)
	}
	script.WriteString("echo ready; while :; do sleep 0.05; done")
	p := startInit(t, initOpts{as: "tini", bare: true, args: []string{"/bin/bash", "-c", script.String()}})
	p.waitOutput("ready", false)
	pid := p.hinitPID()
	for _, s := range sigs {
		if err := syscall.Kill(pid, s); err != nil {
			t.Fatal(err)
		}
		p.waitOutput(fmt.Sprintf("got %d", s), false)
	}
	p.signal(syscall.SIGKILL)
}

// A fault signal sent with kill(2) to PID 1 (`docker kill -s ABRT`) is
// dropped, as the kernel drops it for tini, which catches none of them:
// main runs on. Before, the Go runtime's own handler took it for a crash of
// hinit's: a goroutine dump, exit 2, and the container gone.
func TestFaultSignalsSentToPID1(t *testing.T) {
	p := startInit(t, initOpts{as: "tini", bare: true,
		args: []string{"/bin/bash", "-c", "trap 'exit 6' TERM; trap 'echo got' USR1; echo ready; while :; do sleep 0.05; done"}})
	p.waitOutput("ready", false)
	for _, s := range []syscall.Signal{syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL,
		syscall.SIGSEGV, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGSTKFLT} {
		p.signal(s)
	}
	p.signal(syscall.SIGUSR1)
	p.waitOutput("got", false)
	p.signal(syscall.SIGTERM)
	if code := p.wait(10 * time.Second); code != 6 {
		t.Errorf("exit %d, want main's 6", code)
	}
	if s := p.stderr.String(); s != "" {
		t.Errorf("stderr %q, want nothing", s)
	}
}

// A SIGINT hinit inherited ignored (nohup, a background job of a script) is
// forwarded as tini forwards it (it blocks what it forwards, and the kernel
// keeps a blocked signal whatever its disposition), and starts no shutdown:
// main, which set its own handler, gets it and runs on. Before, hinit
// neither caught nor forwarded it.
func TestInheritedIgnoredForwarded(t *testing.T) {
	self := testprog.Command("x")[0]
	p := startInit(t, initOpts{as: "tini", bare: true, flags: []string{"-v"},
		wrap: []string{"/usr/bin/env", "HINIT_TEST_SIGCONF=1", self}, // SIGINT ignored when hinit starts
		args: envProg("signals-all", "SIGINT", "SIGUSR1")})
	p.waitOutput("ready", false)
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGINT)
	p.waitOutput("got SIGINT", false)
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGUSR1)
	if code := p.wait(10 * time.Second); code != 0 {
		t.Errorf("exit %d, want main's 0", code)
	}
	if strings.Contains(p.stderr.String(), "shutting down") {
		t.Errorf("the inherited ignored SIGINT started a shutdown:\n%s", p.stderr)
	}
}

// Descriptors hinit was started with beyond 0-2 reach main at their
// numbers, as tini's child gets them (podman's --preserve-fds, `tini -- app
// 3<file`); no service gets them. Before, main found fd 3 closed.
func TestInheritedDescriptorsReachMain(t *testing.T) {
	if _, err := os.Stat(DefaultConfig); err == nil {
		t.Skip("a hinit.yaml exists here")
	}
	dir := testprog.PublicDir(t)
	given := filepath.Join(dir, "given")
	if err := os.WriteFile(given, []byte("fd three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, configured := range []bool{false, true} {
		t.Run(fmt.Sprintf("configured=%v", configured), func(t *testing.T) {
			f, err := os.Open(given)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			out := filepath.Join(dir, fmt.Sprintf("out-%v", configured))
			main := `cat <&3 >` + out + `.main`
			env := []string{"PATH=" + os.Getenv("PATH"), "HINIT_TEST_AS_INIT=1"}
			args := []string{"-s", "--", "/bin/sh", "-c", main}
			if configured {
				cfg := filepath.Join(dir, "hinit.yaml")
				if err := os.WriteFile(cfg, []byte("services:\n  probe: {command: [/bin/sh, -c, 'if [ -e /proc/self/fd/3 ]; then echo leaked; else echo sealed; fi >"+out+".svc'], restart: never}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				env = append(env, "HINIT_CONFIG="+cfg, "HINIT_RUNTIME_DIR="+filepath.Join(dir, "run"), "HINIT_SCANDIR="+filepath.Join(dir, "service"))
				args = []string{"--", "/bin/sh", "-c", main + `; while [ ! -s ` + out + `.svc ]; do sleep 0.01; done`}
			}
			cmd := exec.Command(testprog.Command("x")[0], args...)
			cmd.Env = env
			cmd.ExtraFiles = []*os.File{f} // fd 3, open across exec
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			if b, _ := os.ReadFile(out + ".main"); string(b) != "fd three\n" {
				t.Errorf("main read %q from fd 3, want the file given to hinit there", b)
			}
			if b, _ := os.ReadFile(out + ".svc"); configured && string(b) != "sealed\n" {
				t.Errorf("the service found fd 3: %q", b)
			}
		})
	}
}

// A descriptor hinit was started with too near the descriptor limit to
// pass on (the fork needs numbers past main's last) is left out with a
// warning, and main starts. It did not: main's start failed with EBADF.
func TestInheritedDescriptorNearLimit(t *testing.T) {
	if _, err := os.Stat(DefaultConfig); err == nil {
		t.Skip("a hinit.yaml exists here")
	}
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	self := testprog.Command("x")[0]
	for _, shim := range []bool{false, true} {
		for _, fd := range []int{1020, 1021, 1022} {
			extra := make([]*os.File, fd-3+1)
			extra[len(extra)-1] = f
			argv := []string{"prlimit", "--nofile=1024:1024", "--", self, "--", "/bin/sh", "-c", "exit 5"}
			if shim { // SIGINT ignored when hinit starts: main starts through the shim
				argv = append([]string{"prlimit", "--nofile=1024:1024", "--", "/usr/bin/env", "HINIT_TEST_SIGCONF=1", self}, argv[3:]...)
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HINIT_TEST_AS_INIT=1"}
			cmd.ExtraFiles = extra
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 5 {
				t.Errorf("fd %d under a limit of 1024, shim %v: exit %d, want main's 5\n%s", fd, shim, code, out)
			}
		}
	}
	// Under a larger limit (soft below it: the Go runtime raises its own)
	// fd 1022 is passed on, up to launch.MaxFD.
	for _, lim := range []string{"4096:4096", "1024:4096"} {
		extra := make([]*os.File, 1022-3+1)
		extra[len(extra)-1] = f
		cmd := exec.Command("prlimit", "--nofile="+lim, "--", self, "--", "/bin/sh", "-c", "[ -e /proc/self/fd/1022 ] && exit 5; exit 6")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HINIT_TEST_AS_INIT=1"}
		cmd.ExtraFiles = extra
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 5 {
			t.Errorf("fd 1022, nofile %s: exit %d, want 5 (main has it)\n%s", lim, code, out)
		}
	}
}

// As tini with a hinit.yaml (the image's /usr/bin/tini links to hinit), an
// entrypoint that gives no program (["/usr/bin/tini","-g","--"], as a
// catalogue pinned for hermes) runs main.default, as the image does with no
// CMD; it exited 1 with tini's "no program given", a boot loop under a
// restart policy. The bare mode keeps tini's error (TestTiniCommandLine).
func TestTiniNoProgramRunsMainDefault(t *testing.T) {
	p, code := runInit(t, initOpts{as: "tini", notPID1: true, flags: []string{"-g"},
		config: "main: {default: [/bin/sh, -c, \"exit 5\"]}\n"})
	if code != 5 {
		t.Errorf("tini -g -- with main.default exiting 5: %d, want 5; stderr:\n%s", code, p.stderr)
	}
}
