package pid1

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// scratchAccounts writes a scratch /etc/passwd and /etc/group (copies of
// the host's, plus line) and returns a wrap for startInit that bind-mounts
// them over /etc in hinit's own mount namespace (made private first, so
// nothing reaches the host) before it execs hinit as PID 1.
func scratchAccounts(t *testing.T, passwdLine, groupLine string) (wrap []string, passwd, group string) {
	t.Helper()
	dir := testprog.PublicDir(t)
	passwd, group = filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
	for _, f := range []struct{ src, dst, line string }{{"/etc/passwd", passwd, passwdLine}, {"/etc/group", group, groupLine}} {
		b, err := os.ReadFile(f.src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.dst, append(b, f.line...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wrap = []string{"/bin/sh", "-c", `mount --make-rprivate / && mount --bind "$0" /etc/passwd && mount --bind "$1" /etc/group && shift && exec "$@"`, passwd, group}
	return wrap, passwd, group
}

func statOwner(t *testing.T, p string) (uid, gid int) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return int(st.Uid), int(st.Gid)
}

// With a terminal (docker run -it) hinit.log is root:<user's group> 0640,
// so that the hermes user can read why a service failed. A boot hook that
// gives the user a new GID (HERMES_GID/PGID, as the image's hermes-setup.sh
// does) is followed by hinit.log as by the env dir, the control socket and
// the scandir; it kept the old GID before.
func TestHinitLogFollowsGIDRemap(t *testing.T) {
	uid := testprog.UnusedUID(t)
	newGID := uid + 1
	wrap, _, group := scratchAccounts(t, fmt.Sprintf("hinituser:x:%d:%d::/:/bin/sh\n", uid, uid), fmt.Sprintf("hinituser:x:%d:\n", uid))
	_, tty, _, _ := openTerminal(t)
	// The hook rewrites the user's GID the way hermes-setup.sh's set_field does
	// (in place here: the file is a bind mount).
	hook := fmt.Sprintf(`sed 's/^hinituser:x:%d:%d:/hinituser:x:%d:%d:/' /etc/passwd >%[5]s/p && cat %[5]s/p >/etc/passwd && `+
		`sed 's/^hinituser:x:%[1]d:/hinituser:x:%[4]d:/' /etc/group >%[5]s/g && cat %[5]s/g >/etc/group`,
		uid, uid, uid, newGID, filepath.Dir(group))
	cfg := fmt.Sprintf("user: hinituser\nboot:\n  - {name: remap, command: [/bin/sh, -c, %q]}\nmain: {user: root}\n", hook)
	p := startInit(t, initOpts{config: cfg, tty: tty, wrap: wrap, args: []string{"/bin/true"}})
	tty.Close()
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("hinit exited %d", code)
	}
	run := filepath.Join(p.dir, "run")
	if _, gid := statOwner(t, filepath.Join(run, "env")); gid != newGID {
		t.Fatalf("env dir group %d, want the new GID %d (the remap did not happen?)", gid, newGID)
	}
	if _, gid := statOwner(t, filepath.Join(run, "hinit.log")); gid != newGID {
		t.Errorf("hinit.log group %d, want the user's new GID %d: the user cannot read it", gid, newGID)
	}
}

// hinit.yaml's user made by a boot hook (a derived image that creates its
// account at first boot) gets the env dir, the control socket and the
// scandir once the hooks are done, as a user whose ids the hooks changed
// does. Before, they stayed root's: the user's hsvc got "permission denied",
// its with-contenv could not read the environment, and it could not
// register a service.
func TestUserMadeByHook(t *testing.T) {
	uid := testprog.UnusedUID(t)
	wrap, passwd, group := scratchAccounts(t, "", "")
	hook := fmt.Sprintf(`echo "hinituser:x:%d:%d::/:/bin/sh" >>%s && echo "hinituser:x:%d:" >>%s`, uid, uid, passwd, uid, group)
	dir := testprog.PublicDir(t)
	cfg := fmt.Sprintf("user: hinituser\nboot:\n  - {name: make-user, command: [/bin/sh, -c, %q]}\nmain: {default: [/bin/sh, -c, 'id -u >%s/main-uid; exec sleep 100']}\n",
		hook, dir)
	p := startInit(t, initOpts{config: cfg, wrap: wrap})
	uidFile := filepath.Join(dir, "main-uid")
	testprog.WaitFor(t, 30*time.Second, "main to say who it is", func() bool {
		b, _ := os.ReadFile(uidFile)
		return strings.HasSuffix(string(b), "\n")
	})
	if b, _ := os.ReadFile(uidFile); strings.TrimSpace(string(b)) != fmt.Sprint(uid) {
		t.Fatalf("main runs as uid %q, want %d", b, uid)
	}
	run := filepath.Join(p.dir, "run")
	for _, c := range []struct {
		path     string
		wantUID  int
		checkUID bool
	}{{filepath.Join(run, "env"), 0, false}, {filepath.Join(run, "control.sock"), 0, false}, {filepath.Join(p.dir, "service"), uid, true}} {
		u, g := statOwner(t, c.path)
		if g != uid || (c.checkUID && u != c.wantUID) {
			t.Errorf("%s is %d:%d, want owner %d and group %d (the user's)", c.path, u, g, c.wantUID, uid)
		}
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(20 * time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want main's %d", code, 128+int(syscall.SIGTERM))
	}
}
