package reaper

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hinit/childsig"
	"hinit/internal/testprog"
)

// The hermes user owns the programs of its services (an s6 dir's run, a
// service.yaml's command in its volume) and may take a write lease on
// one: the kernel then holds every open of it, an exec included, up to
// fs.lease-break-time (45 s by default, host-wide). A child that execs
// such a program as that user must not hold PID 1 up meanwhile. Before,
// the fork waited for the child's exec under the reaper's lock: nothing
// was reaped and nothing started for 45 s, at every restart of that
// service (an unrelated start here waited 44.8 s).
func TestLeasedProgramHoldsNothingUp(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the child runs as another user")
	}
	testprog.ExposeBinary(t)
	run := filepath.Join(testprog.PublicDir(t), "run")
	if err := os.WriteFile(run, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(run, 10000, 10000); err != nil {
		t.Fatal(err)
	}
	hermes := &syscall.Credential{Uid: 10000, Gid: 10000}
	argv := testprog.Command("lease", run)
	holder := exec.Command(argv[0], argv[1:]...)
	holder.Env = append(os.Environ(), testprog.Env())
	holder.SysProcAttr = &syscall.SysProcAttr{Credential: hermes}
	holder.Stderr = os.Stderr
	release, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Wait()
	defer release.Close()
	said := bufio.NewReader(out)
	if l, err := said.ReadString('\n'); l != "leased\n" {
		t.Fatalf("lease holder said %q, %v", l, err)
	}

	r := newReaper(t)
	type result struct {
		done <-chan Status
		err  error
	}
	leased := make(chan result, 1)
	go func() {
		attr := &syscall.ProcAttr{Env: []string{}, Sys: &syscall.SysProcAttr{Credential: hermes}}
		_, done, err := r.Start(run, []string{run}, attr, childsig.Inherited())
		leased <- result{done, err}
	}()
	if l, err := said.ReadString('\n'); l != "broken\n" { // the child's exec waits on the lease now
		t.Fatalf("lease holder said %q, %v", l, err)
	}
	other := make(chan Status, 1)
	go func() {
		_, done := start(t, r, "exit", "4")
		other <- <-done
	}()
	select {
	case st := <-other:
		if st.Code != 4 {
			t.Errorf("the other child exited %d, want 4", st.Code)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("another child's start and exit not seen within 10 s while the hermes user's program was leased")
		defer func() { <-other }()
	}
	release.Close()
	if res := <-leased; res.err == nil {
		<-res.done
	}
}

// A child of another user is root until the shim's exec, and becomes the
// user in the shim, outside the reaper's lock: from its setuid on the
// user may stop it (SIGSTOP needs no privilege over one's own process),
// and a child forked as the user and stopped before its exec held the
// fork, and the lock reap takes, for good (a uid-10000 loop of kill(-1,
// SIGSTOP) caught the 4th start of a /bin/true as 10000). Here the shim is
// a script that says who it runs as: 0, not 10000. And through the real
// shim the program runs as the user, with its groups, in its dir.
func TestShimForkedAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the child runs as another user")
	}
	dir := testprog.PublicDir(t)
	said := filepath.Join(dir, "uid")
	script := filepath.Join(dir, "shim")
	// (then, as the real shim does before its exec, its ready byte on the
	// error fd, 3)
	if err := os.WriteFile(script, []byte("#!/bin/sh\nid -u >\"$SAID\"\nprintf '\\377' >&3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hermes := &syscall.Credential{Uid: 10000, Gid: 10000, Groups: []uint32{10000, 44}}
	r := newReaper(t)
	oldExe := shimExe
	shimExe = script
	attr := &syscall.ProcAttr{Env: []string{"SAID=" + said}, Dir: dir, Sys: &syscall.SysProcAttr{Credential: hermes}}
	_, done, err := r.Start("/bin/true", []string{"true"}, attr, childsig.Inherited())
	shimExe = oldExe
	if err != nil {
		t.Fatalf("start through the script: %v", err)
	}
	<-done
	if b, err := os.ReadFile(said); string(b) != "0\n" {
		t.Errorf("the shim ran as uid %q (%v), want 0: the user could stop it before its exec", b, err)
	}

	testprog.ExposeBinary(t)
	out := filepath.Join(dir, "out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	argv := testprog.Command("whoami")
	attr = &syscall.ProcAttr{Env: []string{testprog.Env()}, Dir: dir, Files: []uintptr{0, f.Fd(), 2},
		Sys: &syscall.SysProcAttr{Credential: hermes}}
	_, done, err = r.Start(argv[0], argv, attr, childsig.Inherited())
	if err != nil {
		t.Fatalf("start whoami: %v", err)
	}
	if st := <-done; st.ExitStatus() != 0 {
		t.Fatalf("whoami: %+v", st)
	}
	b, _ := os.ReadFile(out)
	if want := "uid=10000 gid=10000 groups=44,10000 cwd=" + dir + " "; !strings.HasPrefix(string(b), want) {
		t.Errorf("whoami said %q, want it to begin %q", b, want)
	}
	attr.Dir = filepath.Join(dir, "missing")
	if _, _, err := r.Start(argv[0], argv, attr, childsig.Inherited()); err != syscall.ENOENT {
		t.Errorf("start in a missing dir: %v, want ENOENT", err)
	}
}
