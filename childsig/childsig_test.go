package childsig

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

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
