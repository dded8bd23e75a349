package asuser

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMain turns the test binary into the helper "noroot FILE": Do as bob
// from a process that is not root, creating FILE.
func TestMain(m *testing.M) {
	if p := os.Getenv("ASUSER_NOROOT"); p != "" {
		err := Do(bob, func() error { return os.WriteFile(p, nil, 0o644) })
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDoWithoutRoot: a process that is not root cannot switch; fn runs with
// the process's own rights instead of failing.
func TestDoWithoutRoot(t *testing.T) {
	requireRoot(t)
	base := baseDir(t)
	home := userDir(t, base, "home", alice, 0o755)
	p := filepath.Join(home, "f")
	// The test binary sits in root's 0700 build dir: run a copy.
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "asuser.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "ASUSER_NOROOT="+p, "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(alice.UID), Gid: uint32(alice.GID)}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("Do as uid %d: %v: %s", alice.UID, err, out)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; int(uid) != alice.UID {
		t.Fatalf("file owned by %d, want the process's own uid %d", uid, alice.UID)
	}
}
