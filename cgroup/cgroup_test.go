package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestField(t *testing.T) {
	for _, c := range []struct {
		text string
		want uint64
		ok   bool
	}{
		{"low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n", 2, true}, // v2 memory.events
		{"oom_kill_disable 0\nunder_oom 0\noom_kill 7\n", 7, true},                // v1 memory.oom_control
		{"oom_kill_disable 0\nunder_oom 0\n", 0, false},                           // v1 before 4.13
		{"oom_kill x\n", 0, false},
	} {
		got, ok := field([]byte(c.text), "oom_kill")
		if got != c.want || ok != c.ok {
			t.Errorf("field(%q) = %d, %v; want %d, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}

// TestDirOf: the layouts a hinit meets, as /proc/self/mountinfo and
// /proc/self/cgroup show them.
func TestDirOf(t *testing.T) {
	const (
		tmpfs  = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		v1Host = tmpfs +
			"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n" +
			"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n" +
			"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
		v1Docker = "700 690 0:70 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs rw,mode=755\n" +
			"705 700 0:32 /docker/abc /sys/fs/cgroup/memory ro,nosuid master:9 - cgroup cgroup rw,memory\n" +
			"706 700 0:36 /docker/abc /sys/fs/cgroup/pids ro,nosuid - cgroup cgroup rw,pids\n"
		v2 = "800 790 0:80 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw,nsdelegate\n"
		// systemd's hybrid layout: v2 with no controllers beside v1's.
		hybrid = tmpfs +
			"33 31 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n" +
			"35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		spaced = "35 31 0:32 / /mnt/cg\\040v1 rw - cgroup cgroup rw,memory\n"
	)
	for _, c := range []struct {
		name, mountinfo, cgroup, controller, want string
	}{
		{"v1 host", v1Host, "4:memory:/process_api/x\n8:pids:/\n2:cpu,cpuacct:/a\n", "memory", "/sys/fs/cgroup/memory/process_api/x"},
		{"v1 host, the root's pids", v1Host, "4:memory:/process_api/x\n8:pids:/\n", "pids", "/sys/fs/cgroup/pids"},
		{"v1 host, co-mounted controllers", v1Host, "2:cpu,cpuacct:/a\n", "cpuacct", "/sys/fs/cgroup/cpu,cpuacct/a"},
		{"v1 docker", v1Docker, "4:memory:/docker/abc\n8:pids:/docker/abc\n", "memory", "/sys/fs/cgroup/memory"},
		{"v1 docker, a cgroup below the container's", v1Docker, "4:memory:/docker/abc/sub\n", "memory", "/sys/fs/cgroup/memory/sub"},
		{"v1 docker, a cgroup the mount does not show", v1Docker, "4:memory:/other\n", "memory", ""},
		{"v2 with a cgroup namespace", v2, "0::/\n", "memory", "/sys/fs/cgroup"},
		{"v2 on a host", v2, "0::/system.slice/x.service\n", "pids", "/sys/fs/cgroup/system.slice/x.service"},
		{"hybrid: memory on v1", hybrid, "4:memory:/m\n0::/u\n", "memory", "/sys/fs/cgroup/memory/m"},
		{"hybrid: pids nowhere but the empty v2", hybrid, "4:memory:/m\n0::/u\n", "pids", "/sys/fs/cgroup/unified/u"},
		{"no cgroup mounted", tmpfs, "0::/\n", "memory", ""},
		{"a mount point with a space", spaced, "4:memory:/\n", "memory", "/mnt/cg v1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := dirOf(parseMounts([]byte(c.mountinfo)), ownPaths([]byte(c.cgroup)), c.controller); got != c.want {
				t.Errorf("dirOf(%s) = %q, want %q", c.controller, got, c.want)
			}
		})
	}
}

// TestRead: read takes a regular file at an absolute path only; a FIFO,
// a symlink at the end or a relative path is refused at once.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file, fifo, link := filepath.Join(dir, "f"), filepath.Join(dir, "fifo"), filepath.Join(dir, "link")
	if err := os.WriteFile(file, []byte("oom_kill 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if b, err := read(file); err != nil || string(b) != "oom_kill 4\n" {
		t.Errorf("read(file) = %q, %v", b, err)
	}
	for _, p := range []string{fifo, link, "f", ""} {
		if b, err := read(p); err == nil {
			t.Errorf("read(%q) = %q, want an error", p, b)
		}
	}
	t.Chdir(dir)
	if _, err := readNumber("pids.max"); err == nil {
		t.Error("a relative path was read")
	}
}

// TestOwnCgroup: on this machine, this process's own memory cgroup is
// found where the kernel puts its memory files.
func TestOwnCgroup(t *testing.T) {
	dir := Dir("memory")
	if dir == "" {
		t.Skip("no memory cgroup visible here")
	}
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains("\n"+string(procs), "\n"+strconv.Itoa(os.Getpid())+"\n") {
		t.Errorf("%s/cgroup.procs does not list this process (%d)", dir, os.Getpid())
	}
	n, ok := OOMKills()
	t.Logf("%s: oom_kill %d (%v)", dir, n, ok)
}

// A death is judged against the counts its process started with: a
// SIGKILL hinit did not send after an OOM kill is out of memory; any
// other failure after a refused fork is the pids limit's, unless hinit
// ended the run (a stop: its exit code answers a signal); a success, a
// count that did not rise or cannot be read is neither.
func TestMark(t *testing.T) {
	var oom, pids uint64
	readable := true
	c := Counts{OOMKills: func() (uint64, bool) { return oom, readable }, PidsRefusals: func() (uint64, bool) { return pids, readable }}
	m := c.Mark()
	if m.OOMKilled(syscall.SIGKILL, false) || m.PidsLimited(2, 0, false) {
		t.Fatal("judged against counts that did not rise")
	}
	oom, pids = 1, 1
	for _, tc := range []struct {
		code          int
		sig           syscall.Signal
		sent          bool
		oomed, pidsed bool
	}{
		{sig: syscall.SIGKILL, oomed: true, pidsed: true},
		{sig: syscall.SIGKILL, sent: true},
		{sig: syscall.SIGTERM, pidsed: true},
		{sig: syscall.SIGABRT, sent: true},
		{code: 2, pidsed: true},
		{code: 2, sent: true}, // at its stop
		{code: 0},
	} {
		if got := m.OOMKilled(tc.sig, tc.sent); got != tc.oomed {
			t.Errorf("OOMKilled(%v, sent %v) = %v, want %v", tc.sig, tc.sent, got, tc.oomed)
		}
		if got := m.PidsLimited(tc.code, tc.sig, tc.sent); got != tc.pidsed {
			t.Errorf("PidsLimited(%d, %v, sent %v) = %v, want %v", tc.code, tc.sig, tc.sent, got, tc.pidsed)
		}
	}
	readable = false
	if m.OOMKilled(syscall.SIGKILL, false) || m.PidsLimited(2, 0, false) {
		t.Error("judged against counts that cannot be read")
	}
	if (Counts{}).Mark().PidsLimited(2, 0, false) || (Mark{}).OOMKilled(syscall.SIGKILL, false) {
		t.Error("a zero Mark judged a death")
	}
}

// MemoryLimitOf reads v2's memory.max and v1's memory.limit_in_bytes;
// "max", v1's number for no limit and a dir without either are no limit.
func TestMemoryLimitOf(t *testing.T) {
	for _, tc := range []struct {
		file, text string
		want       int64
		ok         bool
	}{
		{"memory.max", "268435456\n", 256 << 20, true},
		{"memory.max", "max\n", 0, false},
		{"memory.limit_in_bytes", "67108864\n", 64 << 20, true},
		{"memory.limit_in_bytes", "9223372036854771712\n", 0, false},
		{"memory.current", "4096\n", 0, false},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok := MemoryLimitOf(dir); got != tc.want || ok != tc.ok {
			t.Errorf("%s %q: MemoryLimitOf = %d, %v; want %d, %v", tc.file, tc.text, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := MemoryLimitOf(""); ok {
		t.Error(`MemoryLimitOf("") found a limit`)
	}
}
