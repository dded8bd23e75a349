package cgroup

import (
	"os"
	"path/filepath"
	"strings"
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

// TestPick: the layouts a hinit meets, as directories in a temporary root.
func TestPick(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string // under the root
		own   map[string]string
		want  string // under the root; "" for none
	}{
		{"v2 with a cgroup namespace", []string{"memory.events"}, map[string]string{"": "/"}, "memory.events"},
		{"v2 on a host", []string{"cgroup.controllers", "system.slice/x.service/memory.events"},
			map[string]string{"": "/system.slice/x.service"}, "system.slice/x.service/memory.events"},
		{"v2 without a namespace, the mount showing the container", []string{"memory.events"},
			map[string]string{"": "/system.slice/docker-1.scope"}, "memory.events"},
		{"v2 root cgroup: no such file", []string{"cgroup.controllers"}, map[string]string{"": "/"}, ""},
		{"v1 in docker", []string{"memory/memory.oom_control"}, map[string]string{"memory": "/docker/1"}, "memory/memory.oom_control"},
		{"v1 on a host", []string{"memory/memory.oom_control", "memory/a/b/memory.oom_control"},
			map[string]string{"memory": "/a/b"}, "memory/a/b/memory.oom_control"},
		{"hybrid: v1 memory, an empty v2", []string{"unified/cgroup.controllers", "memory/memory.oom_control"},
			map[string]string{"memory": "/", "": "/"}, "memory/memory.oom_control"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range c.files {
				p := filepath.Join(dir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			old := root
			root = dir
			defer func() { root = old }()
			name := filepath.Base(c.want)
			if c.want == "" {
				name = "memory.events"
			}
			got := pick(c.own, "memory", name)
			if want := filepath.Join(dir, c.want); c.want == "" && got != "" || c.want != "" && got != want {
				t.Errorf("pick = %q, want %q", strings.TrimPrefix(got, dir), c.want)
			}
		})
	}
}

// TestOwnCgroup: on this machine, this process's own cgroup is found and
// its OOM kill count read when the kernel has one.
func TestOwnCgroup(t *testing.T) {
	if len(ownPaths()) == 0 {
		t.Fatal("no line in /proc/self/cgroup")
	}
	dir := Dir("memory")
	if dir == "" {
		t.Skip("no memory controller here")
	}
	n, ok := OOMKills()
	t.Logf("%s: oom_kill %d (%v)", dir, n, ok)
	var text []byte
	for _, name := range []string{"memory.events", "memory.oom_control"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			text = b
			break
		}
	}
	if strings.Contains(string(text), "oom_kill ") != ok {
		t.Errorf("OOMKills says %v for %s:\n%s", ok, dir, text)
	}
}
