package reaper

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
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
