package s6compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Enter renames every thread of the process, and makes root again from
// scratch: a link planted in its place is removed, not followed.
func TestEnter(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "s6")
	victim := filepath.Join(base, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, root); err != nil { // planted by a previous boot's user
		t.Fatal(err)
	}
	if err := Enter(root, "/run/hinit/env"); err != nil {
		t.Fatal(err)
	}
	tids, _ := os.ReadDir("/proc/self/task")
	for _, tid := range tids {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", tid.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(b)) != Comm {
			t.Errorf("thread %s is named %q, want %s", tid.Name(), b, Comm)
		}
	}
	if b, _ := os.ReadFile("/proc/self/comm"); strings.TrimSpace(string(b)) != Comm {
		t.Errorf("/proc/self/comm %q, want %s", b, Comm)
	}
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		t.Fatalf("%s: %v %v, want a dir", root, fi, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "basedir")); err != nil || !fi.IsDir() {
		t.Errorf("basedir: %v", err)
	}
	if l, err := os.Readlink(filepath.Join(root, "container_environment")); err != nil || l != "/run/hinit/env" {
		t.Errorf("container_environment -> %q (%v), want /run/hinit/env", l, err)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Errorf("Enter wrote through the planted link into %s", victim)
	}
}
