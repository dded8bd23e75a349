package asuser

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Test identities: uids with no /etc/passwd entry, which is all the kernel
// needs.
var (
	alice = ID{UID: 10000, GID: 10000}
	bob   = ID{UID: 10001, GID: 10001}
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: switching identities is what is tested")
	}
}

// baseDir returns a fresh root-owned 0755 directory, removed at the end.
func baseDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// userDir returns a directory inside base owned by id, with mode perm.
func userDir(t *testing.T, base, name string, id ID, perm os.FileMode) string {
	t.Helper()
	d := filepath.Join(base, name)
	if err := os.Mkdir(d, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, id.UID, id.GID); err != nil {
		t.Fatal(err)
	}
	return d
}

// rootFile creates a root-only file holding "root\n" and returns its path.
func rootFile(t *testing.T, base string) string {
	t.Helper()
	p := filepath.Join(base, "root-only")
	if err := os.WriteFile(p, []byte("root\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func assertContent(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Fatalf("%s holds %q, want %q", path, b, want)
	}
}

// fsuids returns the fsuid of each thread of this process, read from
// /proc/self/task/*/status ("Uid: real effective saved fs").
func fsuids(t *testing.T) map[string]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread is gone
		}
		ids[task.Name()] = statusField(string(b), "Uid", 3)
	}
	return ids
}

// threadFS returns the calling thread's fsuid and fsgid.
func threadFS(t *testing.T) (uid, gid int) {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		t.Error(err)
		return -1, -1
	}
	return statusField(string(b), "Uid", 3), statusField(string(b), "Gid", 3)
}

// statusField returns word i of field key of /proc status text as a
// number, or -1.
func statusField(status, key string, i int) int {
	if w := strings.Fields(statusLine(status, key)); i < len(w) {
		if n, err := strconv.Atoi(w[i]); err == nil {
			return n
		}
	}
	return -1
}
