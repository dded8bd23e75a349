package asuser

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

func TestDoCreatesFilesAsUser(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name string
		id   ID
	}{
		{"uid and gid", alice},
		{"different gid", ID{UID: 10001, GID: 10002}},
		{"with groups", ID{UID: 10000, GID: 10000, Groups: []int{10003, 10004}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := userDir(t, baseDir(t), "home", tc.id, 0o755)
			p := filepath.Join(dir, "f")
			err := Do(tc.id, func() error {
				return os.WriteFile(p, []byte("x"), 0o644)
			})
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			sys := st.Sys().(*syscall.Stat_t)
			if int(sys.Uid) != tc.id.UID || int(sys.Gid) != tc.id.GID {
				t.Fatalf("file owned by %d:%d, want %d:%d", sys.Uid, sys.Gid, tc.id.UID, tc.id.GID)
			}
		})
	}
}

func TestDoDropsRootRights(t *testing.T) {
	requireRoot(t)
	base := baseDir(t) // root-owned 0755
	err := Do(alice, func() error {
		return os.WriteFile(filepath.Join(base, "f"), nil, 0o644)
	})
	if !errors.Is(err, syscall.EACCES) {
		t.Fatalf("writing into a root-owned 0755 dir as uid %d: got %v, want EACCES", alice.UID, err)
	}
	if _, err := os.Stat(filepath.Join(base, "f")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file exists after a refused write: %v", err)
	}
}

func TestDoSetsGroups(t *testing.T) {
	requireRoot(t)
	shared := ID{UID: 0, GID: 10005}
	tests := []struct {
		name    string
		id      ID
		wantErr error
	}{
		{"member of the dir's group", ID{UID: 10000, GID: 10000, Groups: []int{10005}}, nil},
		{"not a member", alice, syscall.EACCES},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := userDir(t, baseDir(t), "shared", shared, 0o770)
			err := Do(tc.id, func() error {
				return os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestDoSetsThreadIdentity(t *testing.T) {
	requireRoot(t)
	var uid, gid int
	err := Do(bob, func() error {
		uid, gid = threadFS(t)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if uid != bob.UID || gid != bob.GID {
		t.Fatalf("thread fsuid:fsgid = %d:%d, want %d:%d", uid, gid, bob.UID, bob.GID)
	}
}

// TestCallerKeepsRootRights: the switched threads get root's identity
// back, so the caller and every thread of the process have root's
// filesystem rights.
func TestCallerKeepsRootRights(t *testing.T) {
	requireRoot(t)
	private := userDir(t, baseDir(t), "private", alice, 0o700)
	for i := 0; i < 20; i++ {
		if err := Do(alice, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	// Only CAP_DAC_OVERRIDE lets root write into alice's 0700 dir.
	if err := os.WriteFile(filepath.Join(private, "by-root"), nil, 0o600); err != nil {
		t.Fatalf("caller lost root's rights after Do: %v", err)
	}
	testprog.WaitFor(t, 5*time.Second, "switched threads to exit", func() bool {
		for _, uid := range fsuids(t) {
			if uid != 0 {
				return false
			}
		}
		return true
	})
}

func TestDoConcurrent(t *testing.T) {
	requireRoot(t)
	base := baseDir(t)
	dirs := make([]string, 100)
	for i := range dirs {
		id := ID{UID: 10000 + i, GID: 10000 + i}
		dirs[i] = userDir(t, base, fmt.Sprint(i), id, 0o700)
	}
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := ID{UID: 10000 + i, GID: 10000 + i}
			err := Do(id, func() error {
				if uid, gid := threadFS(t); uid != id.UID || gid != id.GID {
					return fmt.Errorf("thread has %d:%d, want %d:%d", uid, gid, id.UID, id.GID)
				}
				// Only id may write into its 0700 dir.
				return os.WriteFile(filepath.Join(dir, "f"), nil, 0o600)
			})
			if err != nil {
				t.Errorf("uid %d: %v", id.UID, err)
			}
		}()
	}
	wg.Wait()
}

func TestDoPropagates(t *testing.T) {
	requireRoot(t)
	errX := errors.New("x")
	if err := Do(alice, func() error { return errX }); !errors.Is(err, errX) {
		t.Fatalf("error: got %v, want %v", err, errX)
	}
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want boom", p)
		}
	}()
	Do(alice, func() error { panic("boom") })
}

// TestDoKeepsItsThreads: a thread Do switched is switched back and reused,
// not destroyed: none of the process's threads ends over 50 calls, and
// every one has root's fsuid, fsgid and groups after them. Before, each
// call destroyed one, and the runtime made another when it next needed
// one, which under a container's pids limit ended hinit ("fatal error:
// newosproc").
func TestDoKeepsItsThreads(t *testing.T) {
	requireRoot(t)
	bobsGroups := ID{UID: bob.UID, GID: bob.GID, Groups: []int{10002, 10003}}
	for range 5 { // the runtime makes what threads it needs
		if err := Do(bobsGroups, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	before := fsuids(t)
	masks := sigBlk(t)
	for range 50 {
		if err := Do(bobsGroups, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	after := fsuids(t)
	for tid := range before {
		if _, ok := after[tid]; !ok {
			t.Errorf("thread %s ended", tid)
		}
	}
	for tid := range after {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", tid, "status"))
		if err != nil {
			continue
		}
		if uid, gid := statusField(string(b), "Uid", 3), statusField(string(b), "Gid", 3); uid != 0 || gid != 0 {
			t.Errorf("thread %s has fsuid:fsgid %d:%d after Do, want 0:0", tid, uid, gid)
		}
		if m, ok := masks[tid]; ok && statusLine(string(b), "SigBlk") != m {
			t.Errorf("thread %s blocks %s after Do, %s before", tid, statusLine(string(b), "SigBlk"), m)
		}
		if g := statusLine(string(b), "Groups"); g != statusLine(procStatus(t), "Groups") {
			t.Errorf("thread %s has groups %q after Do, want the process's %q", tid, g, statusLine(procStatus(t), "Groups"))
		}
	}
}

// procStatus is the main thread's /proc status.
func procStatus(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// statusLine is field key of /proc status text, "" when it is missing.
func statusLine(status, key string) string {
	v, _ := testprog.StatusField(status, key)
	return v
}

// TestDoRunsFourAtOnce: at most maxSwitched calls run at once, each on a
// thread of its own; the others wait for their turn. Ten logs rotating at
// once needed ten threads, which under a pids limit ended hinit.
func TestDoRunsFourAtOnce(t *testing.T) {
	requireRoot(t)
	var now, most atomic.Int32
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 20 {
		wg.Go(func() {
			Do(alice, func() error {
				n := now.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				<-release
				now.Add(-1)
				return nil
			})
		})
	}
	testprog.WaitFor(t, 5*time.Second, "four calls running", func() bool { return now.Load() == maxSwitched })
	close(release)
	wg.Wait()
	if m := most.Load(); m != maxSwitched {
		t.Errorf("%d calls ran at once, want %d", m, maxSwitched)
	}
}

// TestDoRootTakesNoTurn: a call as root waits for no turn the image's
// user holds: the hermes user, holding all four (a tree it grows under its
// service dir's removal), held root's own log files with them.
func TestDoRootTakesNoTurn(t *testing.T) {
	requireRoot(t)
	defer holdEveryTurn(t)()
	// Root with hinit's group has nothing to switch; with another (a
	// root service's log of group adm) it has turns of its own.
	for _, id := range []ID{{UID: 0, GID: unix.Getegid()}, {UID: 0, GID: 4}} {
		done := make(chan error, 1)
		go func() { done <- Do(id, func() error { return nil }) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("a call as %+v waited for a turn the image's user held", id)
		}
	}
}

// TestDoCtxGivesUp: a call whose context ends while it waits for its turn
// is not run later: a request whose client gave up (hsvc's 10 s) was
// recorded and applied minutes after, once the turns were free.
func TestDoCtxGivesUp(t *testing.T) {
	requireRoot(t)
	ended, end := context.WithCancel(context.Background())
	end()
	for range 20 { // a free turn: select would take it half the time
		if err := DoCtx(ended, bob, func() error { t.Error("run with its context ended"); return nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("DoCtx with its context ended: %v", err)
		}
	}
	defer holdEveryTurn(t)()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ran := false
	if err := DoCtx(ctx, bob, func() error { ran = true; return nil }); !errors.Is(err, context.DeadlineExceeded) || ran {
		t.Errorf("DoCtx past its context: %v, ran %v; want %v and not run", err, ran, context.DeadlineExceeded)
	}
}

// TestDoRefusesKeptCaps: under SECBIT_NO_SETUID_FIXUP the kernel keeps the
// filesystem capabilities when fsuid leaves 0, and fn would run with
// root's rights on the user's files: Do fails instead, fn never run. The
// test runs itself again under setpriv with that bit.
func TestDoRefusesKeptCaps(t *testing.T) {
	requireRoot(t)
	if os.Getenv("ASUSER_TEST_SECUREBIT") == "" {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("needs setpriv (util-linux)")
		}
		cmd := exec.Command(setpriv, "--securebits", "+no_setuid_fixup", os.Args[0], "-test.run", "^TestDoRefusesKeptCaps$", "-test.v")
		cmd.Env = append(os.Environ(), "ASUSER_TEST_SECUREBIT=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestDoRefusesKeptCaps") {
			t.Fatalf("under SECBIT_NO_SETUID_FIXUP: %v\n%s", err, out)
		}
		return
	}
	ran := false
	err := Do(alice, func() error { ran = true; return nil })
	if !errors.Is(err, errNotSwitched) || ran {
		t.Errorf("Do with the filesystem capabilities kept: %v, fn ran: %v; want errNotSwitched and no run", err, ran)
	}
}

// sigBlk is each thread's blocked signals, by tid.
func sigBlk(t *testing.T) map[string]string {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	masks := map[string]string{}
	for _, task := range tasks {
		if b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status")); err == nil {
			masks[task.Name()] = statusLine(string(b), "SigBlk")
		}
	}
	return masks
}

// TestDoBlocksSignals: fn runs with every signal blocked on its thread, so
// that a thread stuck on a hung volume never takes the process's SIGCHLD
// (PID 1 reaped nothing until another signal came).
func TestDoBlocksSignals(t *testing.T) {
	requireRoot(t)
	var blocked string
	err := Do(alice, func() error {
		b, err := os.ReadFile("/proc/thread-self/status")
		blocked = statusLine(string(b), "SigBlk")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := strconv.ParseUint(blocked, 16, 64)
	for _, sig := range []syscall.Signal{syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGURG} {
		if err != nil || m&(1<<(sig-1)) == 0 {
			t.Errorf("SigBlk %s (%v) while fn runs: %v not blocked", blocked, err, sig)
		}
	}
}

// TestQuietBlocksSignals: fn runs with every signal but the faults blocked
// on its thread, and the thread's mask is its own again afterwards. No
// root needed.
func TestQuietBlocksSignals(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadSigBlk(t)
	var m uint64
	Quiet(func() { m = threadSigBlk(t) })
	for _, sig := range []syscall.Signal{syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGURG} {
		if m&(1<<(sig-1)) == 0 {
			t.Errorf("SigBlk %016x while fn runs: %v not blocked", m, sig)
		}
	}
	if m&(1<<(syscall.SIGSEGV-1)) != 0 {
		t.Errorf("SigBlk %016x while fn runs: SIGSEGV blocked (a fault there would end the process without a panic)", m)
	}
	if after := threadSigBlk(t); after != before {
		t.Errorf("SigBlk %016x after Quiet, %016x before", after, before)
	}
}

// threadSigBlk is the calling thread's SigBlk.
func threadSigBlk(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/status")
	m, ok := testprog.SigMask(string(b), "SigBlk")
	if err != nil || !ok {
		t.Fatalf("SigBlk of /proc/thread-self/status: %v, read: %v", err, ok)
	}
	return m
}

// holdEveryTurn takes every turn of Do as alice until the returned function
// is called, which waits for them to be given back.
func holdEveryTurn(t *testing.T) (release func()) {
	t.Helper()
	var running atomic.Int32
	var wg sync.WaitGroup
	free := make(chan struct{})
	for range maxSwitched {
		wg.Go(func() {
			Do(alice, func() error { running.Add(1); <-free; return nil })
		})
	}
	testprog.WaitFor(t, 5*time.Second, "every turn taken", func() bool { return running.Load() == maxSwitched })
	return func() {
		close(free)
		wg.Wait()
	}
}
