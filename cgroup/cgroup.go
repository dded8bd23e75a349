// Package cgroup reads the container's own cgroup: how many more tasks its
// pids controller allows and how many it has refused, its memory limit,
// and how many of its processes the kernel's OOM killer has ended. It is
// the one place that knows the files and the two cgroup versions.
//
// This process's cgroup is the path /proc/self/cgroup gives for a
// controller (v1) or for the unified hierarchy (v2), found under the mount
// of that hierarchy that /proc/self/mountinfo lists: the mount's root is
// the cgroup shown at its mount point (docker's v1 mounts show the
// container's own cgroup there; a cgroup namespace shows its own root).
// Only the kernel writes these files; they are opened without following a
// symlink or waiting on a FIFO, and read with a bound.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// PidsRoom is how many more tasks the pids controller lets this cgroup
// start; false when nothing limits it or it cannot be read.
func PidsRoom() (int, bool) {
	dir := pidsDir()
	if dir == "" {
		return 0, false
	}
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

// PidsRefusals is how many new processes and threads of this cgroup the
// pids controller has refused so far (the "max" of pids.events: fork and
// clone failed with EAGAIN); false when the kernel does not say.
func PidsRefusals() (uint64, bool) { return PidsRefusalsOf(pidsDir()) }

// MemoryLimit is the memory limit of this process's cgroup in bytes;
// false when there is none or it cannot be read.
func MemoryLimit() (int64, bool) { return MemoryLimitOf(memoryDir()) }

// MemoryLimitOf is MemoryLimit of the cgroup at dir: memory.max (v2), or
// memory.limit_in_bytes (v1, whose "no limit" is a number near 2^63).
func MemoryLimitOf(dir string) (int64, bool) {
	if dir == "" {
		return 0, false
	}
	for _, name := range []string{"memory.max", "memory.limit_in_bytes"} {
		n, err := readNumber(filepath.Join(dir, name))
		if err == nil && n > 0 && n < 1<<62 {
			return n, true
		}
	}
	return 0, false
}

// memoryDir and pidsDir are Dir("memory") and Dir("pids"), found once:
// they are read before every fork, and a process's cgroup is the one it
// started in (hinit moves no process, itself included).
var (
	memoryDir = sync.OnceValue(func() string { return Dir("memory") })
	pidsDir   = sync.OnceValue(func() string { return Dir("pids") })
)

// OOMReason is what hinit says of a death Mark.OOMKilled puts down to the
// OOM killer, after "killed by SIGKILL, ".
const OOMReason = "out of memory (the container's cgroup counted an OOM kill)"

// PidsReason is what hinit says of a failed run Mark.PidsLimited puts
// down to the pids limit, after "exit 2, ".
const PidsReason = "the container's pids limit refused a new process or thread meanwhile"

// ErrPidsLimited is wrapped by StartFailed's error for a start the pids
// limit failed; its text is PidsReason.
var ErrPidsLimited = errors.New(PidsReason)

// StartFailed is err, a failed start's (a service's, main's, a boot
// hook's) with its exit code code, followed by "; " and ErrPidsLimited when
// the pids limit refused a task since m (PidsLimited): the fork, or the
// start shim's threads.
func (m Mark) StartFailed(err error, code int) error {
	if m.PidsLimited(code, 0, false) {
		return fmt.Errorf("%w; %w", err, ErrPidsLimited)
	}
	return err
}

// Counts are the counters of the container's cgroup a death is judged
// by: nil for a counter not to read.
type Counts struct {
	OOMKills     func() (uint64, bool)
	PidsRefusals func() (uint64, bool)
}

// Container is Counts of this process's own cgroup.
var Container = Counts{OOMKills: OOMKills, PidsRefusals: PidsRefusals}

// Mark is what a process's death is judged against: the counts when it
// started.
type Mark struct{ oom, pids counter }

// counter is one count read before a fork.
type counter struct {
	read  func() (uint64, bool)
	n     uint64
	known bool
}

func markCounter(read func() (uint64, bool)) counter {
	c := counter{read: read}
	if read != nil {
		c.n, c.known = read()
	}
	return c
}

// rose reports whether the count is above its mark now.
func (c counter) rose() bool {
	if !c.known {
		return false
	}
	n, ok := c.read()
	return ok && n > c.n
}

// Mark reads c before a fork; the zero Mark (the bare mode's) marks
// nothing.
func (c Counts) Mark() Mark {
	return Mark{oom: markCounter(c.OOMKills), pids: markCounter(c.PidsRefusals)}
}

// OOMKilled reports whether a process marked m that died of sig is put
// down to the OOM killer: a SIGKILL that hinit did not send (sentByHinit),
// while the count rose. The kernel does not say whom it killed; docker's
// OOMKilled is the same count, for the whole container.
func (m Mark) OOMKilled(sig syscall.Signal, sentByHinit bool) bool {
	return sig == syscall.SIGKILL && !sentByHinit && m.oom.rose()
}

// PidsLimited reports whether a run of a process marked m that failed on
// its own (exit code non-zero, or killed by sig; not endedByHinit, by its
// stop or a kill) is put down to the container's pids limit: it refused a
// new process or thread while the process ran. As for the OOM killer, the
// kernel does not say whose: a program that cannot start a thread fails in
// its own way (Go's runtime exits 2, Python raises, glibc's abort is a
// SIGABRT).
func (m Mark) PidsLimited(code int, sig syscall.Signal, endedByHinit bool) bool {
	failed := code != 0 || sig != 0
	return failed && !endedByHinit && m.pids.rose()
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

// PidsRefusalsOf is PidsRefusals of the cgroup at dir.
func PidsRefusalsOf(dir string) (uint64, bool) {
	if dir == "" {
		return 0, false
	}
	b, err := read(filepath.Join(dir, "pids.events"))
	if err != nil {
		return 0, false
	}
	return field(b, "max")
}

// Dir is the directory of this process's cgroup of controller ("memory",
// "pids"), "" when none is mounted where this process can see it.
func Dir(controller string) string {
	own, err := read("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	info, err := read("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	return dirOf(parseMounts(info), ownPaths(own), controller)
}

// mount is a cgroup filesystem in /proc/self/mountinfo.
type mount struct {
	point       string   // where it is mounted
	root        string   // the cgroup of the hierarchy shown at point
	v2          bool     // cgroup2, else v1
	controllers []string // v1: the controllers of its hierarchy
}

// dirOf is controller's cgroup of this process, whose paths are own, under
// the first of mounts that shows it: its v1 hierarchy first, else v2's.
func dirOf(mounts []mount, own map[string]string, controller string) string {
	for _, v2 := range []bool{false, true} {
		key := controller
		if v2 {
			key = ""
		}
		path, ok := own[key]
		if !ok {
			continue
		}
		for _, m := range mounts {
			if m.v2 != v2 || !v2 && !slices.Contains(m.controllers, controller) {
				continue
			}
			if rel, ok := within(path, m.root); ok {
				return filepath.Join(m.point, rel)
			}
		}
	}
	return ""
}

// within is path relative to root when path is root or below it.
func within(path, root string) (string, bool) {
	if root == "/" {
		return path, true
	}
	if path == root {
		return "", true
	}
	rel, ok := strings.CutPrefix(path, root+"/")
	return rel, ok
}

// parseMounts reads the cgroup filesystems of mountinfo text: "ID PARENT
// MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPEROPTIONS".
func parseMounts(info []byte) []mount {
	var ms []mount
	sc := bufio.NewScanner(bytes.NewReader(info))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 6 || len(f) < sep+4 {
			continue
		}
		m := mount{root: unescape(f[3]), point: unescape(f[4])}
		switch f[sep+1] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			m.controllers = strings.Split(f[sep+3], ",")
		default:
			continue
		}
		ms = append(ms, m)
	}
	return ms
}

// unescape undoes mountinfo's octal escapes of a path (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownPaths maps each controller of /proc/self/cgroup text ("" for v2's
// unified line) to this process's path in it.
func ownPaths(text []byte) map[string]string {
	paths := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(text))
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

// maxFile bounds a read: a host's mountinfo of a few thousand mounts.
const maxFile = 4 << 20

// read reads a regular file at an absolute path, not through a symlink at
// its end and not waiting on a FIFO. Not asuser.OpenRegular, which is for
// hermes' dirs and refuses a symlink anywhere on the way: /proc/self is
// one, and so are v1's co-mounted controllers (/sys/fs/cgroup/cpu).
func read(path string) ([]byte, error) {
	if !filepath.IsAbs(path) {
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.EINVAL}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.EINVAL}
	}
	var out []byte
	buf := make([]byte, 4096)
	for len(out) < maxFile {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		out = append(out, buf[:n]...)
	}
	return out, nil
}
