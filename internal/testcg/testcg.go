// Package testcg makes a cgroup for a test: a memory limit the kernel's
// OOM killer enforces, or a pids limit the kernel's fork and clone
// refuse, so that an OOM kill or a refused fork is a real one.
package testcg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"hinit/cgroup"
	"hinit/internal/testprog"
)

// Group is a cgroup made by Memory or Pids.
type Group struct {
	Dir string
}

// Memory makes a child of this process's memory cgroup limited to limit
// bytes, swap included, and removes it at the end of the test. It skips t
// where that cannot be done: not root, no memory controller, a cgroup v2
// parent that does not hand the memory controller down.
func Memory(t testing.TB, limit int64) *Group {
	t.Helper()
	dir := newGroup(t, "memory")
	v := strconv.FormatInt(limit, 10)
	var set []string
	if _, err := os.Stat(filepath.Join(dir, "memory.max")); err == nil { // v2
		set = []string{"memory.max", v, "memory.swap.max", "0"}
	} else if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err == nil { // v1
		set = []string{"memory.limit_in_bytes", v, "memory.memsw.limit_in_bytes", v}
	} else {
		t.Skipf("%s has no memory limit file: the memory controller is not handed down", dir)
	}
	for i := 0; i < len(set); i += 2 {
		p := filepath.Join(dir, set[i])
		if _, err := os.Stat(p); err != nil && i > 0 {
			continue // no swap accounting
		}
		if err := os.WriteFile(p, []byte(set[i+1]), 0); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	return &Group{Dir: dir}
}

// Pids makes a child of this process's pids cgroup that holds at most max
// tasks, and removes it at the end of the test. It skips t as Memory does.
func Pids(t testing.TB, max int) *Group {
	t.Helper()
	dir := newGroup(t, "pids")
	p := filepath.Join(dir, "pids.max")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s has no pids.max: the pids controller is not handed down", dir)
	}
	if err := os.WriteFile(p, []byte(strconv.Itoa(max)), 0); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return &Group{Dir: dir}
}

// newGroup makes a child of this process's cgroup of controller, removed
// at the end of the test; it skips t where that cannot be done.
func newGroup(t testing.TB, controller string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	parent := cgroup.Dir(controller)
	if parent == "" {
		t.Skipf("no %s cgroup", controller)
	}
	dir := filepath.Join(parent, fmt.Sprintf("hinit-test-%d-%s", os.Getpid(), filepath.Base(t.TempDir())))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a %s cgroup: %v", controller, err)
	}
	t.Cleanup(func() {
		// Its processes are gone once the test has reaped them; a zombie
		// still holds it a moment.
		testprog.WaitFor(t, 10*time.Second, "the test cgroup "+dir+" to be removed", func() bool {
			err := syscall.Rmdir(dir)
			return err == nil || errors.Is(err, syscall.ENOENT)
		})
	})
	return dir
}

// Procs is the file a process writes its pid to to join the group.
func (g *Group) Procs() string { return filepath.Join(g.Dir, "cgroup.procs") }

// OOMKills is how many of the group's processes the OOM killer has ended.
func (g *Group) OOMKills() (uint64, bool) { return cgroup.OOMKillsOf(g.Dir) }

// PidsRefusals is how many new tasks of the group the pids limit refused.
func (g *Group) PidsRefusals() (uint64, bool) { return cgroup.PidsRefusalsOf(g.Dir) }
