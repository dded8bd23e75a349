// Package memcg makes a memory cgroup for a test: a limit the kernel's OOM
// killer enforces, so that an OOM kill is a real one.
package memcg

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

// Group is a memory cgroup made by New.
type Group struct {
	Dir string
}

// New makes a child of this process's memory cgroup limited to limit
// bytes, swap included, and removes it at the end of the test. It skips t
// where that cannot be done: not root, no memory controller, a cgroup v2
// parent that does not hand the memory controller down.
func New(t testing.TB, limit int64) *Group {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	parent := cgroup.Dir("memory")
	if parent == "" {
		t.Skip("no memory cgroup")
	}
	dir := filepath.Join(parent, fmt.Sprintf("hinit-test-%d-%s", os.Getpid(), filepath.Base(t.TempDir())))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup: %v", err)
	}
	t.Cleanup(func() {
		// Its processes are gone once the test has reaped them; a zombie
		// still holds it a moment.
		testprog.WaitFor(t, 10*time.Second, "the test cgroup "+dir+" to be removed", func() bool {
			err := syscall.Rmdir(dir)
			return err == nil || errors.Is(err, syscall.ENOENT)
		})
	})
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

// Procs is the file a process writes its pid to to join the group.
func (g *Group) Procs() string { return filepath.Join(g.Dir, "cgroup.procs") }

// OOMKills is how many of the group's processes the OOM killer has ended.
func (g *Group) OOMKills() (uint64, bool) { return cgroup.OOMKillsOf(g.Dir) }
