package svclog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// TestThousandIdleLogs: a thousand services, each having logged a line
// through a write end set blocking the way a child gets it, hold no OS
// thread each: their readers wait in the netpoller.
func TestThousandIdleLogs(t *testing.T) {
	requireRoot(t)
	home := userHome(t)
	before := threads(t)
	logs := make([]*Log, 1000)
	for i := range logs {
		dir := filepath.Join(home, fmt.Sprint("svc", i))
		logs[i] = newLog(t, Options{Name: fmt.Sprint("svc", i), Dir: dir, Owner: alice})
		logs[i].Writer().Fd() // what passing it to a child does
		fmt.Fprintln(logs[i].Writer(), "hello")
	}
	for _, l := range logs {
		testprog.WaitFor(t, 10*time.Second, "the line in "+l.Path(), func() bool {
			st, err := os.Stat(l.Path())
			return err == nil && st.Size() > 0
		})
	}
	n := threads(t)
	t.Logf("threads: %d before, %d with 1000 idle logs", before, n)
	if n > 100 {
		t.Fatalf("%d threads with 1000 idle logs", n)
	}
	if !nonBlocking(t, logs[0].r) {
		t.Fatal("the read end became blocking")
	}
}

// threads reads the thread count of this process.
func threads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := testprog.StatusField(string(b), "Threads")
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("Threads of /proc/self/status: %q", v)
	}
	return n
}

// nonBlocking reports whether f's file description has O_NONBLOCK, without
// calling Fd (which would clear it).
func nonBlocking(t *testing.T, f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	if err != nil {
		t.Fatal(err)
	}
	return flags&unix.O_NONBLOCK != 0
}
