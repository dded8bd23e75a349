package pid1

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// TTY passthrough (SPEC §2), under a real pty in a PID namespace: main is
// the terminal's foreground group, sees the real size even though the
// terminal starts at 0x0 (as with docker run -it), gets every resize,
// TERM unchanged, and Ctrl-C ends the container with 130. PID 1 ignores
// SIGTTIN/SIGTTOU (and catches SIGTSTP) but main does not inherit that. Services never write to
// the terminal, and neither does hinit.
func TestTTYPassthrough(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	// chatty runs once: each fork of a restart sets PID 1's SIGTTIN and
	// SIGTTOU to the child's for its moment (childsig.SetTTY), and main's
	// one reading of PID 1's dispositions fell in one (a CI failure).
	cfg := fmt.Sprintf("services:\n  chatty: {command: %s, restart: never}\n", prog("echo", "5", "service-line"))
	var out testprog.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, ptmx); close(copied) }()
	p := startInit(t, initOpts{config: cfg, tty: tty, env: []string{"TERM=xterm-256color"}, args: argv(prog("tty"))})
	tty.Close()
	// Docker sets the real size some 20 ms after the start.
	time.Sleep(20 * time.Millisecond)
	pty.Setsize(ptmx, &pty.Winsize{Cols: 120, Rows: 40})
	waitFor := func(s string) {
		t.Helper()
		testprog.WaitFor(t, 15*time.Second, fmt.Sprintf("%q on the terminal", s), func() bool {
			return strings.Contains(out.String(), s)
		})
	}
	waitFor("foreground=true size=120x40 TERM=xterm-256color")
	waitFor("ignored-self=none ignored-pid1=SIGTTIN,SIGTTOU")
	pty.Setsize(ptmx, &pty.Winsize{Cols: 100, Rows: 30})
	waitFor("resized 100x30")
	pty.Setsize(ptmx, &pty.Winsize{Cols: 90, Rows: 20})
	waitFor("resized 90x20")
	ptmx.Write([]byte{3}) // Ctrl-C
	if code := p.wait(10 * time.Second); code != 130 {
		t.Errorf("Ctrl-C: exit %d, want 130", code)
	}
	<-copied
	if s := splitAtMainExit(t, out.String()); strings.Contains(s, "service-line") || strings.Contains(s, "hinit:") {
		t.Errorf("something but main wrote to the terminal:\n%s", s)
	}
}

// splitAtMainExit returns what reached a terminal before hinit's "main
// exited" line, main's part. It fails the test unless everything from that
// line on is hinit's own lines, which come back once main has exited.
func splitAtMainExit(t *testing.T, s string) string {
	t.Helper()
	i := strings.Index(s, "hinit: main exited ")
	if i < 0 {
		t.Errorf("no \"main exited\" line on the terminal after main: %q", s)
		return s
	}
	for _, l := range strings.SplitAfter(s[i:], "\r\n") {
		if l != "" && (!strings.HasPrefix(l, "hinit: ") || !strings.HasSuffix(l, "\r\n")) {
			t.Errorf("after main, a line that is not hinit's: %q in %q", l, s)
		}
	}
	return s[:i]
}

// The terminal belongs to main (SPEC §7): while a TUI-like main holds the
// terminal, a service logging every 10 ms (console copies on) and hinit's
// own lines (the service restarting, at debug level) write nothing to it,
// byte for byte, even where hinit has no log file to send its lines to (an
// unwritable runtime dir). After main exits hinit's lines may come back. Before
// issue 12 hinit's lines reached the terminal whenever the runtime dir
// could not be written.
func TestTerminalBelongsToMain(t *testing.T) {
	_, tty, out, copied := openTerminal(t)
	// Each run of the service says so on a fifo that main reads: main
	// holds the terminal across two whole runs and the restart between,
	// whatever the machine's load (it slept 0.5 s before, which a slow
	// start of the service could fill with nothing).
	fifo := filepath.Join(testprog.PublicDir(t), "ran")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("services:\n  chatty:\n    command: [/bin/sh, -c, 'for i in 1 2 3 4 5; do echo svc-line; sleep 0.01; done; echo >%s; exit 3']\n", fifo) +
		"    backoff: {initial: 10ms, max: 20ms}\n    log: {console: true}\n"
	screen := "\x1b[2J\x1b[HTUI-SCREEN"
	p := startInit(t, initOpts{config: cfg, tty: tty,
		env:  []string{"HINIT_LOG_LEVEL=debug", "HINIT_RUNTIME_DIR=/proc/version/run"},
		args: []string{"/bin/sh", "-c", `printf '` + screen + `'; read x <` + fifo + `; read x <` + fifo + `; printf 'DONE\n'`}})
	tty.Close()
	if code := p.wait(15 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	<-copied
	s := out.String()
	i := strings.Index(s, "DONE")
	if i < 0 {
		t.Fatalf("main's DONE never reached the terminal:\n%q", s)
	}
	if s[:i] != screen {
		t.Errorf("the terminal while main held it:\n%q\nwant main's bytes only:\n%q", s[:i], screen)
	}
}

// In a TTY session hinit's own lines go to $HINIT_RUNTIME_DIR/hinit.log,
// which the control group (the hermes user of that session) may read and
// others may not: 0640, root and the group of hinit.yaml's user.
func TestTTYLogReadableByGroup(t *testing.T) {
	_, tty, _, _ := openTerminal(t)
	id := testprog.UnusedUID(t)
	cfg := fmt.Sprintf("user: \"%d:%d\"\nmain: {user: root}\n", id, id)
	p := startInit(t, initOpts{config: cfg, tty: tty, args: argv(prog("sleep", "30s"))})
	tty.Close()
	log := filepath.Join(p.dir, "run", "hinit.log")
	testprog.WaitFor(t, 10*time.Second, "main started in hinit.log", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "main started")
	})
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm() != 0o640 || st.Uid != 0 || int(st.Gid) != id {
		t.Errorf("hinit.log is %v %d:%d, want -rw-r----- 0:%d", fi.Mode(), st.Uid, st.Gid, id)
	}
}

// A terminal on stdin that is not hinit's controlling terminal (hinit
// started by setsid, a terminal handed in from another session) is no
// terminal to hand over: main starts as it would without one, as under
// tini, whose tcsetpgrp fails with ENOTTY and goes on. Before, hinit took it
// for one, main's start failed on the handoff's ioctl, and hinit exited 126.
func TestTerminalThatIsNotControlling(t *testing.T) {
	if _, err := os.Stat(DefaultConfig); err == nil {
		t.Skip("a hinit.yaml exists here")
	}
	_, tty, _, _ := openTerminal(t)
	cmd := exec.Command(testprog.Command("x")[0], "--", "/bin/sh", "-c", "exit 5")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HINIT_TEST_AS_INIT=1", "HINIT_TEST_MOUNT_PROC=1"}
	var out testprog.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &out, &out
	// A session of its own, without a controlling terminal; stdin a tty.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("hinit still running after 15 s")
	}
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Errorf("exit %d, want main's 5\n%s", code, out.String())
	}
}

// A main that leaves the terminal in raw mode (a TUI killed before it could
// restore it) does not leave it so: once main is gone hinit puts back the
// modes it found, before the lines it held back reach the terminal, which
// would otherwise run down the screen as a staircase (no \r without OPOST).
// Before, the modes stayed raw and hinit's released lines came out as
// "\nhinit: ...": seen with `docker run -it` and a read-only /run, or
// `hinit -v`.
func TestTerminalModesAfterMain(t *testing.T) {
	ptmx, tty, out, copied := openTerminal(t)
	before, err := unix.IoctlGetTermios(int(ptmx.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	p := startInit(t, initOpts{bare: true, tty: tty, env: []string{"HINIT_LOG_LEVEL=info"},
		args: []string{"/bin/sh", "-c", "stty raw -echo && printf 'RAW\\n' && kill -9 $$"}})
	tty.Close()
	if code := p.wait(15 * time.Second); code != 137 {
		t.Fatalf("exit %d, want 137 (main killed)", code)
	}
	<-copied // the slave is closed everywhere: EIO after the last byte
	after, err := unix.IoctlGetTermios(int(ptmx.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Errorf("terminal modes after main: lflag %#o oflag %#o, want the ones hinit found: lflag %#o oflag %#o",
			after.Lflag, after.Oflag, before.Lflag, before.Oflag)
	}
	s := out.String()
	held, ok := strings.CutPrefix(s, "RAW\n")
	if !ok {
		t.Fatalf("the terminal: %q, want main's RAW (raw mode: no \\r) first", s)
	}
	if !strings.Contains(held, "hinit: main exited") || strings.Count(held, "\n") != strings.Count(held, "\r\n") {
		t.Errorf("hinit's lines after main: %q, want them with the terminal's own modes (\\r\\n)", held)
	}
}

// Main that runs as the image's user can open its own terminal by name
// (/dev/stdout, /dev/stderr, ttyname: gpg's pinentry, `tee /dev/stderr`),
// as under `docker run -u hermes -it`, where runc makes the user the
// terminal's owner: hinit does the same for main's user while main runs
// and gives the terminal back to its owner after. Before, the terminal
// stayed root's (crw--w---- root tty): "sh: can't create /dev/stdout:
// Permission denied" in `docker run -it IMAGE sh`.
func TestTerminalOwnedByMainsUser(t *testing.T) {
	_, tty, out, copied := openTerminal(t)
	before, err := os.Stat(tty.Name())
	if err != nil {
		t.Fatal(err)
	}
	id := testprog.UnusedUID(t)
	p := startInit(t, initOpts{config: fmt.Sprintf("user: \"%d:%d\"\n", id, id), tty: tty,
		args: []string{"/bin/sh", "-c", "printf 'opened\\n' >/dev/stdout && printf 'by name\\n' >$(tty) && chmod 666 $(tty)"}})
	tty.Close()
	code := p.wait(15 * time.Second)
	<-copied
	if s := splitAtMainExit(t, out.String()); code != 0 || s != "opened\r\nby name\r\n" {
		t.Errorf("main as uid %d: exit %d, terminal %q; want 0, \"opened\\r\\nby name\\r\\n\"", id, code, s)
	}
	after, err := os.Stat(tty.Name())
	if err != nil {
		t.Fatal(err)
	}
	bst, ast := before.Sys().(*syscall.Stat_t), after.Sys().(*syscall.Stat_t)
	if ast.Uid != bst.Uid || ast.Gid != bst.Gid || after.Mode() != before.Mode() {
		t.Errorf("terminal after main: %v %d:%d, want it back as hinit found it: %v %d:%d",
			after.Mode(), ast.Uid, ast.Gid, before.Mode(), bst.Uid, bst.Gid)
	}
}

// What main's user typed into the terminal lent to it (TIOCSTI), and nobody
// read, is thrown away when main exits: the terminal's next reader, root's
// shell around a hinit run in it, would run it as root.
func TestLentTerminalInputThrownAway(t *testing.T) {
	testprog.ExposeBinary(t)
	_, tty, _, _ := openTerminal(t)
	id := testprog.UnusedUID(t)
	p := startInit(t, initOpts{config: fmt.Sprintf("user: \"%d:%d\"\n", id, id), tty: tty,
		args: testprog.Command("type-in", "echo INJECTED\n")})
	if code := p.wait(15 * time.Second); code != 0 {
		t.Fatalf("exit %d, want main's 0", code)
	}
	// The test still holds the terminal open: it is its next reader.
	if n, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCINQ); err != nil || n != 0 {
		t.Errorf("%d bytes (%v) of what main's user typed wait for the terminal's next reader", n, err)
	}
}

// Once main has exited, hinit's own lines go back to stderr, the terminal
// here (docs/image.md: "without a terminal, and after main exits"), and
// stay in hinit.log too: the shutdown's lines (a service killed at its
// deadline, "shutdown complete") reach the user and `docker logs`. Before,
// with a runtime dir they went to hinit.log only, which `docker run --rm`
// throws away with the container; only hinit without a runtime dir wrote
// them to the terminal after main. The boot's lines stay in hinit.log.
func TestHinitLinesAfterMain(t *testing.T) {
	_, tty, out, copied := openTerminal(t)
	p := startInit(t, initOpts{config: "services:\n  idle: {command: " + prog("sleep", "inf") + "}\n", tty: tty,
		args: []string{"/bin/sh", "-c", "printf 'MAIN\\n'"}})
	tty.Close()
	if code := p.wait(15 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	<-copied
	s := out.String()
	after, ok := strings.CutPrefix(s, "MAIN\r\n")
	if !ok || !strings.HasPrefix(after, "hinit: main exited pid=") || !strings.HasSuffix(after, "hinit: shutdown complete\r\n") {
		t.Errorf("the terminal: %q, want MAIN, then hinit's lines from \"main exited\" to \"shutdown complete\"", s)
	}
	b, err := os.ReadFile(filepath.Join(p.dir, "run", "hinit.log"))
	if err != nil {
		t.Fatal(err)
	}
	if log := string(b); !strings.Contains(log, "hinit: main started") || !strings.HasSuffix(log, "hinit: shutdown complete\n") {
		t.Errorf("hinit.log: %q, want the whole session's lines", log)
	}
}

// Ctrl-Z while hinit still has the terminal's foreground (its boot, before
// main is started) does not stop hinit when it is not PID 1, where the
// kernel's protection of a namespace's init does not apply: `docker run
// --init -it`, whose tini makes hinit's group the foreground, or a shell
// with job control. hinit catches SIGTSTP (never at its default, forks
// included) and ignores SIGTTIN and SIGTTOU (catatonit ignores all three;
// tini never stops either: it blocks every signal it forwards); main
// starts with the disposition hinit inherited.
// Before, hinit stopped in the middle of its boot, main never started and
// the container hung until a SIGCONT.
func TestCtrlZDuringBoot(t *testing.T) {
	ptmx, tty, out, copied := openTerminal(t)
	dir := testprog.PublicDir(t)
	fifo := filepath.Join(dir, "go-on")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// release writes "go" once the hook has the fifo open to read: a
	// line written before it opens is lost with the last descriptor (a CI
	// run released a hook that had written in-hook but not yet opened the
	// fifo, and it waited for its 60 s). The writer waits in a goroutine;
	// the cleanup's reader lets it go if the hook never reads.
	var once sync.Once
	release := func() {
		once.Do(func() {
			go func() {
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					f.WriteString("go\n")
					f.Close()
				}
			}()
		})
	}
	t.Cleanup(func() {
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
	})
	hook := fmt.Sprintf("echo $PPID >%s/in-hook.tmp && mv %s/in-hook.tmp %s/in-hook; read x <%s", dir, dir, dir, fifo)
	cfg := fmt.Sprintf("boot:\n  - {name: wait, command: [/bin/sh, -c, %q]}\n", hook)
	// A job-control shell puts hinit in a group of its own, the
	// terminal's foreground, in the shell's session: the group is not
	// orphaned, so a stop signal from the terminal stops it.
	p := startInit(t, initOpts{config: cfg, tty: tty, notPID1: true,
		wrap: []string{"/bin/sh", "-c", `set -m; "$@"; rc=$?; [ $rc -gt 128 ] && kill -9 %1; printf 'rc=%s\n' $rc`, "sh"},
		args: []string{"/bin/sh", "-c", "printf 'MAIN\\n'; exit 7"}})
	tty.Close()
	var hinitPID string
	testprog.WaitFor(t, 15*time.Second, "the boot hook to run", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "in-hook"))
		hinitPID = strings.TrimSpace(string(b))
		return err == nil
	})
	// hinit catches SIGTSTP from its start on, its forks included (a CI
	// run once pressed Ctrl-Z in a fork's window, when hinit ignored it and
	// set it to its default around each fork for the child).
	b, err := os.ReadFile("/proc/" + hinitPID + "/status")
	if mask, ok := testprog.SigMask(string(b), "SigCgt"); err != nil || !ok || mask&(1<<(syscall.SIGTSTP-1)) == 0 {
		t.Fatalf("hinit (pid %s) does not catch SIGTSTP: %v\n%s", hinitPID, err, b)
	}
	ptmx.Write([]byte{0x1a}) // Ctrl-Z
	testprog.WaitFor(t, 5*time.Second, "^Z echoed: the terminal has sent SIGTSTP", func() bool {
		return strings.Contains(out.String(), "^Z")
	})
	release()
	p.wait(15 * time.Second)
	<-copied
	if s := out.String(); !strings.Contains(s, "MAIN\r\n") || !strings.HasSuffix(s, "rc=7\r\n") {
		t.Errorf("the terminal: %q; want main's MAIN and hinit's exit 7 (rc=148: hinit was stopped)", s)
	}
}

// When main never gets the terminal (it cannot be executed, or a boot
// hook with on_failure: stop failed), hinit's reason reaches the terminal:
// SPEC §2's one-line message for 127/126, the failed hook's line. Before,
// in a TTY session they went to hinit.log alone: `docker run -it --rm
// IMAGE /nonexistent` exited 127 with an empty screen, and --rm threw the
// file away.
func TestTerminalWhenMainNeverStarts(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		args         []string
		code         int
		line         string
	}{
		{name: "not found", args: []string{"/nonexistent/main"}, code: 127,
			line: "hinit: error: main: exec /nonexistent/main: no such file or directory\r\n"},
		{name: "hook failed", config: "boot:\n  - {name: setup, command: [/bin/sh, -c, 'exit 3']}\n", args: []string{"/bin/true"}, code: 3,
			line: "hinit: error: boot hook failed: stopping the container (on_failure: stop) hook=setup err=\"exit status 3\"\r\n"},
		{name: "nothing to run", config: "services_max: 5\n", code: 2, line: "hinit: shutdown complete\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, tty, out, copied := openTerminal(t)
			p := startInit(t, initOpts{config: tc.config, tty: tty, args: tc.args})
			tty.Close()
			code := p.wait(15 * time.Second)
			<-copied
			if s := out.String(); code != tc.code || !strings.Contains(s, tc.line) {
				t.Errorf("exit %d, terminal %q; want %d and %q", code, s, tc.code, tc.line)
			}
		})
	}
}

// hinit.log lives on /run, a tmpfs: the container's memory. It is kept at
// most ttyLogMax bytes, the lines before them in hinit.log.1, and no line
// is lost on the way. It used to grow for as long as the session lasted:
// an s6 dir crash-looping at s6's one restart a second added 7,080 bytes a
// minute (10 MB a day). Here the hermes user's entries that the name rule
// refuses make the lines, one each, some 1.3 MB in all.
func TestTTYLogBounded(t *testing.T) {
	_, tty, _, _ := openTerminal(t)
	const n = 3000
	p := startInit(t, initOpts{config: fmt.Sprintf("services_max: %d\n", n+10), tty: tty, args: argv(prog("sleep", "inf"))})
	tty.Close()
	log := filepath.Join(p.dir, "run", "hinit.log")
	testprog.WaitFor(t, 10*time.Second, "main started in hinit.log", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "main started")
	})
	for i := range n { // one "ignoring entry" line each, some 440 bytes
		name := fmt.Sprintf("X%04d%s", i, strings.Repeat("a", 240))
		if err := os.WriteFile(filepath.Join(p.dir, "service", name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// hinit.log.1 first, then hinit.log: a rotation between the two reads
	// then hides lines (counted at the next try), where the other order
	// counted them twice, in both files, and the wait ended before every
	// line was written (a CI run here: 2767 of 3000 counted after it).
	ignored := func() int {
		lines := 0
		for _, f := range []string{log + ".1", log} {
			b, _ := os.ReadFile(f)
			lines += strings.Count(string(b), "ignoring entry")
		}
		return lines
	}
	testprog.WaitFor(t, 30*time.Second, "every ignored entry logged", func() bool { return ignored() >= n })
	if got := ignored(); got != n {
		t.Errorf("%d ignoring-entry lines in hinit.log and hinit.log.1, want %d", got, n)
	}
	for _, f := range []string{log, log + ".1"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > ttyLogMax || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: %d bytes %v, want at most %d bytes, -rw-r-----", filepath.Base(f), fi.Size(), fi.Mode(), ttyLogMax)
		}
	}
}

// openTerminal opens a pty of 80x24 for a test (skipped without one): the
// master, the slave for hinit, and what reaches the terminal, copied from
// the master until the slave is closed everywhere (copied closed).
func openTerminal(t *testing.T) (ptmx, tty *os.File, out *testprog.Buffer, copied <-chan struct{}) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	pty.Setsize(ptmx, &pty.Winsize{Cols: 80, Rows: 24})
	out = &testprog.Buffer{}
	done := make(chan struct{})
	go func() { io.Copy(out, ptmx); close(done) }()
	return ptmx, tty, out, done
}

// In a TTY session, a main that hinit cannot kill at the shutdown deadline
// (root without CAP_KILL, main as hermes: TestShutdownWithoutCapKill)
// ends with hinit, and hinit's lines from then on reach the terminal, as
// they do once main has exited. Before, they went to hinit.log alone: the
// container exited 137 with nothing on the screen, and --rm threw the file
// away.
func TestTTYMainHinitCannotKill(t *testing.T) {
	_, tty, out, copied := openTerminal(t)
	p := startInit(t, initOpts{config: "main: {user: \"10000:10000\"}\n", tty: tty, args: []string{"sleep", "60"},
		env: []string{"HINIT_SHUTDOWN_TIMEOUT=400ms"}, dropCaps: "-kill"})
	tty.Close()
	testprog.WaitFor(t, 10*time.Second, "main started in hinit.log", func() bool {
		b, _ := os.ReadFile(filepath.Join(p.dir, "run", "hinit.log"))
		return strings.Contains(string(b), "main started")
	})
	p.signal(syscall.SIGTERM)
	code := p.wait(10 * time.Second)
	<-copied
	if s := out.String(); code != 137 || !strings.Contains(s, "cannot kill main: it ends with hinit") || !strings.HasSuffix(s, "hinit: shutdown complete\r\n") {
		t.Errorf("exit %d, terminal %q; want 137 and hinit's lines from \"cannot kill main\" to \"shutdown complete\"", code, s)
	}
}

// In a TTY session a boot hook's output reaches hinit.log through a pipe
// hinit copies.
// Before, the hook had hinit.log's own descriptor as its stdout and
// stderr, and so had whatever it started, as hermes too: a process left
// behind could empty root's log, or ftruncate it to gigabytes, which the
// next rotation copied into /run (a review: 1 GB in hinit.log.1, the
// tmpfs full). A process the hook leaves holding the pipe does not hold
// the boot up.
func TestHookOutputThroughAPipe(t *testing.T) {
	_, tty, _, _ := openTerminal(t)
	hook := `printf 'out %s\n' "$(readlink /proc/self/fd/1)"; printf 'err %s\n' "$(readlink /proc/self/fd/2)" >&2; (sleep 30 &)`
	cfg := fmt.Sprintf("boot:\n  - {name: setup, command: [/bin/sh, -c, %q]}\n", hook)
	p := startInit(t, initOpts{config: cfg, tty: tty, args: argv(prog("sleep", "30s"))})
	tty.Close()
	log := filepath.Join(p.dir, "run", "hinit.log")
	var s string
	// Both of the hook's lines, whenever the copy gets them there (its
	// end waits 100 ms for them, and the sleep holds the pipe), and main.
	testprog.WaitFor(t, 10*time.Second, "main started and the hook's lines in hinit.log", func() bool {
		b, _ := os.ReadFile(log)
		s = string(b)
		return strings.Contains(s, "main started") && strings.Contains(s, "\nout ") && strings.Contains(s, "\nerr ")
	})
	for _, fd := range []string{"out", "err"} {
		if i := strings.Index(s, "\n"+fd+" "); !strings.HasPrefix(s[i+len(fd)+2:], "pipe:[") {
			t.Errorf("hinit.log:\n%s\nwant the hook's %s a pipe", s, fd)
		}
	}
}

// A hinit started in the background of a job-control shell (`hinit --
// cmd &`) leaves the terminal to the shell: it is not main's to take.
// Before, main was made the foreground from the background, and the
// shell's next read failed (an interactive bash exited).
func TestBackgroundHinitLeavesTheTerminal(t *testing.T) {
	ptmx, tty, out, copied := openTerminal(t)
	started := filepath.Join(testprog.PublicDir(t), "started")
	// (a builtin loop: a sleep would be a foreground job, after which the
	// shell takes the terminal back)
	script := fmt.Sprintf(`set -m; "$@" & until [ -e %s ]; do :; done; if read -r x; then echo "GOT=$x"; else echo LOST; fi; kill %%1; wait`, started)
	p := startInit(t, initOpts{bare: true, tty: tty, notPID1: true, wrap: []string{"/bin/bash", "-c", script, "sh"},
		args: []string{"/bin/sh", "-c", fmt.Sprintf("touch %s; exec sleep 30", started)}})
	tty.Close()
	testprog.WaitFor(t, 10*time.Second, "main started", func() bool { _, err := os.Stat(started); return err == nil })
	shellReads(t, p, ptmx, out, copied)
}

// shellReads types a line on the terminal, waits for the shell that started
// hinit to end, and checks that it read the line (its GOT=typed).
func shellReads(t *testing.T, p *initProc, ptmx *os.File, out *testprog.Buffer, copied <-chan struct{}) {
	t.Helper()
	ptmx.Write([]byte("typed\r"))
	p.wait(15 * time.Second)
	<-copied
	if s := out.String(); !strings.Contains(s, "GOT=typed") {
		t.Errorf("the terminal: %q; want the shell to read GOT=typed", s)
	}
}

// After main, the terminal's foreground is hinit's group again, whoever
// started hinit reads it next (`hinit -- true; read x` in a script), also
// when main could not be executed. Before, it stayed with main's group,
// gone, and the script's read failed with EIO.
func TestForegroundGivenBack(t *testing.T) {
	for _, main := range []string{"/bin/true", "/nonexistent/main"} {
		t.Run(filepath.Base(main), func(t *testing.T) {
			ptmx, tty, out, copied := openTerminal(t)
			p := startInit(t, initOpts{bare: true, tty: tty, notPID1: true,
				wrap: []string{"/bin/sh", "-c", `"$@"; echo READY; if read -r x; then echo "GOT=$x"; else echo NO-TERMINAL; fi`, "sh"},
				args: []string{main}})
			tty.Close()
			testprog.WaitFor(t, 10*time.Second, "READY", func() bool { return strings.Contains(out.String(), "READY") })
			shellReads(t, p, ptmx, out, copied)
		})
	}
}

// A Ctrl-Z that stops main as PID 1 (docker run -it IMAGE cat) is undone:
// nothing above could continue main. Before, main stayed stopped, and the
// terminal with it, until a docker kill.
func TestCtrlZAsPID1(t *testing.T) {
	ptmx, tty, out, copied := openTerminal(t)
	p := startInit(t, initOpts{bare: true, tty: tty, args: []string{"/bin/cat"}})
	tty.Close()
	typed := func(s string) { catCopies(t, ptmx, out, s) }
	typed("abc")
	ptmx.Write([]byte{0x1a}) // Ctrl-Z
	typed("def")
	ptmx.Write([]byte{0x04}) // Ctrl-D: cat reads its end
	if code := p.wait(15 * time.Second); code != 0 {
		t.Errorf("exit %d, want cat's 0", code)
	}
	<-copied
}

// A Ctrl-Z that stops main under a job-control shell is undone too: the
// shell waits for hinit, not for main, and never sees main stop; nor does
// an init above hinit (docker run --init -it). Before, the terminal was
// dead until hinit was killed.
func TestCtrlZWithAShellAbove(t *testing.T) {
	ptmx, tty, out, copied := openTerminal(t)
	p := startInit(t, initOpts{bare: true, tty: tty, notPID1: true,
		wrap: []string{"/bin/bash", "-c", `set -m; "$@"; echo "rc=$?"`, "sh"},
		args: []string{"/bin/cat"}})
	tty.Close()
	typed := func(s string) { catCopies(t, ptmx, out, s) }
	typed("abc")
	ptmx.Write([]byte{0x1a})
	typed("def")
	ptmx.Write([]byte{0x04})
	p.wait(15 * time.Second)
	<-copied
	if s := out.String(); !strings.HasSuffix(s, "rc=0\r\n") {
		t.Errorf("the terminal: %q; want cat's end, rc=0, last", s)
	}
}

// catCopies types line on the terminal and waits for cat, main, to copy
// it: the terminal's echo, then cat's line.
func catCopies(t *testing.T, ptmx *os.File, out *testprog.Buffer, line string) {
	t.Helper()
	ptmx.Write([]byte(line + "\r"))
	testprog.WaitFor(t, 10*time.Second, "cat's copy of "+line, func() bool {
		return strings.Contains(out.String(), line+"\r\n"+line+"\r\n")
	})
}
