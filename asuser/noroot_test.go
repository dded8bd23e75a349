package asuser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestMain turns the test binary into the helper "noroot FILE": Do as bob
// from a process that is not root, creating FILE with the SigBlk of the
// thread fn runs on.
func TestMain(m *testing.M) {
	if p := os.Getenv("ASUSER_NOROOT"); p != "" {
		err := Do(bob, func() error {
			b, err := os.ReadFile("/proc/thread-self/status")
			if err != nil {
				return err
			}
			return os.WriteFile(p, []byte(statusLine(string(b), "SigBlk")), 0o644)
		})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDoWithoutRoot: a process that is not root cannot switch; fn runs with
// the process's own rights instead of failing, and on a thread that takes
// no signal, as when it switches.
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
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := strconv.ParseUint(string(b), 16, 64)
	if err != nil || m&(1<<(syscall.SIGCHLD-1)) == 0 || m&(1<<(syscall.SIGTERM-1)) == 0 {
		t.Fatalf("SigBlk %q (%v) while fn runs: SIGCHLD and SIGTERM not both blocked", b, err)
	}
}
