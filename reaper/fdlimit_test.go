package reaper

import (
	"io"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"hinit/childsig"
	"hinit/internal/testprog"
)

// A file passed to a child at the open files limit's last number (what
// PID 1 gets when its table is nearly full: a log's pipe, /dev/null) is
// the child's, with the fork's exec pipe below it. Go's child moves that
// pipe above the highest of the files it is given, past the limit: dup3
// failed with EBADF and the start with "exec false: bad file descriptor".
// Through a plain fork and through the shim.
func TestFileAtLimitReachesChild(t *testing.T) {
	r := newReaper(t)
	for _, tc := range []struct {
		name string
		st   childsig.State
	}{
		{"plain", childsig.Inherited()},
		{"shim", childsig.State{Ignored: childsig.Inherited().Ignored | childsig.Of(syscall.SIGUSR1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw, top := pipeAtLimit(t)
			devnull, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			defer devnull.Close()
			attr := &syscall.ProcAttr{Files: []uintptr{devnull.Fd(), pw.Fd(), pw.Fd()}}
			_, done, err := r.Start("/bin/sh", []string{"sh", "-c", "echo ok"}, attr, tc.st)
			pw.Close()
			if err != nil {
				t.Fatalf("start with its stdout at fd %d, the limit's last: %v", top, err)
			}
			b, _ := io.ReadAll(pr)
			recv(t, done)
			if string(b) != "ok\n" {
				t.Errorf("child wrote %q to the file at fd %d, want \"ok\\n\"", b, top)
			}
		})
	}
}

// pipeAtLimit lowers the soft open files limit to a little above what is
// open, fills the table, and returns a pipe whose write end has the
// limit's last number, with a few numbers below free again; all put back
// at the test's end.
func pipeAtLimit(t *testing.T) (pr, pw *os.File, top int) {
	t.Helper()
	testprog.LimitDescriptors(t, 64)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	fill := testprog.FillDescriptors(t, os.DevNull)
	// The last two become the pipe, the eight below them free for the
	// fork's pipes and /dev/null.
	n := len(fill)
	if n < 10 {
		t.Fatalf("only %d descriptors filled", n)
	}
	for _, f := range fill[n-10:] {
		f.Close()
	}
	// Take the eight lower numbers again while the pipe is made, so that
	// it gets the two highest.
	var hold []*os.File
	for range 8 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		hold = append(hold, f)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	for _, f := range hold {
		f.Close()
	}
	top = int(lim.Cur) - 1
	if int(pw.Fd()) != top {
		t.Fatalf("pipe's write end is fd %d, want %d", pw.Fd(), top)
	}
	return pr, pw, top
}
