package childsig

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// The shim run by hand: bad arguments are one line and exit 2; good ones
// exec the program with exactly the state given, whatever the shim's own;
// a program that cannot be executed is its errno on the error fd and 127.
func TestShim(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(args []string, extra *os.File) (string, string, int) {
		var out, errb strings.Builder
		cmd := exec.Command(self)
		cmd.Args = args
		cmd.Stdout, cmd.Stderr = &out, &errb
		if extra != nil {
			cmd.ExtraFiles = []*os.File{extra}
		}
		cmd.Run()
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	if _, stderr, code := run([]string{ShimName, "zz", "0", "3", "", "", "/bin/true", "true"}, nil); code != 2 ||
		stderr != ShimName+`: bad arguments ["zz" "0" "3" ""]`+"\n" {
		t.Errorf("bad arguments: exit %d, %q", code, stderr)
	}
	st := State{Ignored: Of(syscall.SIGTERM, syscall.SIGSEGV, syscall.SIGHUP), Blocked: Of(syscall.SIGUSR1, syscall.SIGILL)}
	out, stderr, code := run(ShimArgs(st, 3, nil, "", "/bin/cat", []string{"cat", "/proc/self/status"}), os.Stderr)
	if code != 0 {
		t.Fatalf("shim to cat: exit %d, %s", code, stderr)
	}
	for field, want := range map[string]Set{"SigIgn": st.Ignored, "SigBlk": st.Blocked} {
		if m, ok := testprog.SigMask(out, field); !ok || Set(m) != want {
			t.Errorf("%s %s (read: %v), want %s", field, Set(m), ok, want)
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	_, _, code = run(ShimArgs(st, 3, nil, "", "/nonexistent", []string{"x"}), pw)
	pw.Close()
	b := make([]byte, 8)
	n, _ := pr.Read(b)
	if err := ShimOutcome(b[:n]); code != 127 || err != syscall.ENOENT {
		t.Errorf("missing program: exit %d, error fd %q; want 127 and ENOENT", code, b[:n])
	}
}

// A user at its process limit: the shim, becoming it, runs the program or
// fails its exec with EAGAIN (the kernel's choice), an errno on its error
// fd, and writes nothing else. Before, the runtime's template thread,
// started after the switch of user, could not be made: "runtime: failed to
// create new OS thread" and a goroutine dump went into the service's log,
// and the error fd said nothing (ErrShimEnded). hinit is built as it ships,
// without cgo: a cgo binary (go test's) starts that thread at start.
func TestShimAtTheProcessLimit(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	bin := filepath.Join(t.TempDir(), "hinit")
	build := exec.Command("go", "build", "-o", bin, "hinit/cmd/hinit")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(unix.RLIMIT_NPROC, &old); err != nil {
		t.Fatal(err)
	}
	// Root's own forks pass the limit; the shim, once uid 10000 (its
	// threads alone are more than one), does not.
	if err := syscall.Setrlimit(unix.RLIMIT_NPROC, &syscall.Rlimit{Cur: 1, Max: 1}); err != nil {
		t.Fatal(err)
	}
	restore := func() { syscall.Setrlimit(unix.RLIMIT_NPROC, &old) }
	defer restore()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var errb strings.Builder
	cmd := exec.Command(bin)
	cmd.Args = ShimArgs(State{}, 3, &syscall.Credential{Uid: 10000, Gid: 10000}, "", "/bin/true", []string{"true"})
	cmd.Stderr, cmd.ExtraFiles = &errb, []*os.File{pw}
	cmd.Run()
	restore()
	pw.Close()
	b := make([]byte, 8)
	n, _ := pr.Read(b)
	code, outcome := cmd.ProcessState.ExitCode(), ShimOutcome(b[:n])
	ran := code == 0 && outcome == nil
	if !ran && (code != 127 || outcome != syscall.EAGAIN) || errb.Len() != 0 {
		t.Errorf("exit %d, error fd %v, stderr %.200q; want /bin/true run or EAGAIN, and nothing on stderr", code, outcome, errb.String())
	}
}
