// Package cgroup reads the container's own cgroup: how many more tasks its
// pids controller allows, and how many of its processes the kernel's OOM
// killer has ended. It is the one place that knows the files and the two
// cgroup versions.
//
// The container's cgroup is found as the kernel names it in
// /proc/self/cgroup, under the mount /sys/fs/cgroup (v2) or
// /sys/fs/cgroup/<controller> (v1); where that path does not exist, the
// mount's root: a container with a cgroup namespace of its own, or
// docker's v1 mounts, show their own cgroup there. Only the kernel writes
// these files, and they are read with a bound.
package cgroup

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// root is where cgroup filesystems are mounted. A variable for tests only.
var root = "/sys/fs/cgroup"

// PidsRoom is how many more tasks the pids controller lets this cgroup
// start; false when nothing limits it or it cannot be read.
func PidsRoom() (int, bool) {
	dir := Dir("pids")
	max, err := readNumber(filepath.Join(dir, "pids.max"))
	if err != nil {
		return 0, false // "max" too: no limit
	}
	cur, err := readNumber(filepath.Join(dir, "pids.current"))
	if err != nil {
		return 0, false
	}
	return int(max - cur), true
}

// OOMKills is how many processes of this cgroup the kernel's OOM killer
// has ended so far; false when the kernel does not say (no memory
// controller, a kernel before 4.13 on v1).
func OOMKills() (uint64, bool) { return OOMKillsOf(memoryDir()) }

// memoryDir is Dir("memory"), found once: OOMKills is read before every
// fork, and a process's cgroup is the one it started in (hinit moves no
// process, itself included).
var memoryDir = sync.OnceValue(func() string { return Dir("memory") })

// OOMMark is what a process's death by SIGKILL is judged against: the OOM
// kill count when it started.
type OOMMark struct {
	count func() (uint64, bool)
	kills uint64
	known bool
}

// MarkOOM reads count (OOMKills, or a test's cgroup's) before a fork; nil
// count marks nothing.
func MarkOOM(count func() (uint64, bool)) OOMMark {
	m := OOMMark{count: count}
	if count != nil {
		m.kills, m.known = count()
	}
	return m
}

// OOMKilled reports whether a process marked m that died of sig is put
// down to the OOM killer: a SIGKILL that hinit did not send (sentByHinit),
// while the count rose. The kernel does not say whom it killed; docker's
// OOMKilled is the same count, for the whole container.
func (m OOMMark) OOMKilled(sig syscall.Signal, sentByHinit bool) bool {
	if sig != syscall.SIGKILL || sentByHinit || !m.known {
		return false
	}
	n, ok := m.count()
	return ok && n > m.kills
}

// OOMKillsOf is OOMKills of the cgroup at dir: oom_kill of its
// memory.events (v2) or memory.oom_control (v1).
func OOMKillsOf(dir string) (uint64, bool) {
	if dir == "" {
		return 0, false
	}
	for _, name := range []string{"memory.events", "memory.oom_control"} {
		if b, err := read(filepath.Join(dir, name)); err == nil {
			return field(b, "oom_kill")
		}
	}
	return 0, false
}

// Dir is the directory of this process's cgroup of controller ("memory",
// "pids"), "" when none is found.
func Dir(controller string) string {
	if p := pick(ownPaths(), controller, "cgroup.procs"); p != "" {
		return filepath.Dir(p)
	}
	return ""
}

// pick is name in the cgroup of controller whose paths /proc/self/cgroup
// gives as own: the first that exists of v1's own path, v1's mount root,
// v2's own path and v2's mount root. "" when none does.
func pick(own map[string]string, controller, name string) string {
	var candidates []string
	for _, m := range []struct{ dir, key string }{{filepath.Join(root, controller), controller}, {root, ""}} {
		if p, ok := own[m.key]; ok {
			candidates = append(candidates, filepath.Join(m.dir, p, name))
		}
		candidates = append(candidates, filepath.Join(m.dir, name))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return ""
}

// ownPaths maps each controller of /proc/self/cgroup ("" for v2's unified
// line) to this process's path in it.
func ownPaths() map[string]string {
	b, err := read("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	paths := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			paths[c] = filepath.Clean("/" + parts[2])
		}
	}
	return paths
}

// field is the number after key in a flat keyed file ("oom_kill 3").
func field(b []byte, key string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+" "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// readNumber reads a file holding one number.
func readNumber(path string) (int64, error) {
	b, err := read(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// maxFile bounds a read: the files read here are a few lines long.
const maxFile = 64 << 10

func read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxFile))
}
