package docker

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// procStatus is the field (Uid, Gid, Groups) of /proc/PID/status in c.
func (c *ctr) procStatus(pid int, field string) string {
	c.t.Helper()
	v, ok := testprog.StatusField(c.readFile("/proc/"+strconv.Itoa(pid)+"/status"), field)
	if !ok {
		c.t.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	return v
}

// procEnv is the environment of PID in c, as hinit started it, read as
// hermes (root of docker exec lacks CAP_SYS_PTRACE for another uid).
func (c *ctr) procEnv(pid int) map[string]string {
	c.t.Helper()
	env := map[string]string{}
	for _, kv := range strings.Split(c.sh("hermes", "cat /proc/"+strconv.Itoa(pid)+"/environ"), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// mainPID is the pid of main (the one `sleep` of the container).
func (c *ctr) mainPID() int {
	c.t.Helper()
	pid, err := strconv.Atoi(strings.Fields(c.sh("root", "pidof sleep"))[0])
	if err != nil {
		c.t.Fatal(err)
	}
	return pid
}

// TestRemapPUID: -e PUID/PGID (the NAS aliases of HERMES_UID/HERMES_GID)
// remap hermes before anything runs as it: main and the gateway run as
// 1234:1234, hermes' hsvc calls are answered, the volume's allow-listed
// paths become 1234's, and everything else in it keeps its owner: a host's
// top-level file (hermes#19788) and what a planted symlink points to, with
// a "refusing" line in docker logs.
func TestRemapPUID(t *testing.T) {
	t.Parallel()
	needEngine(t)
	vol := volume(t)
	n := name(t)
	must(t, "run", "--rm", "--pull", "never", "--network", "none", "--label", runLabel, "--name", n,
		"-v", vol+":/opt/data", "--entrypoint", "/bin/sh", image, "-c", `set -e
		mkdir -p /opt/data/profiles/coder /opt/data/sessions/old /opt/data/mine
		echo soul >/opt/data/profiles/coder/SOUL.md
		touch /opt/data/auth.json /opt/data/state.db /opt/data/sessions/old/s.json /opt/data/mine/keep
		touch /opt/data/.hermes_history /opt/data/errors.log
		echo secret >/opt/data/host_secret.json
		chown -R 10000:10000 /opt/data
		chown 0:0 /opt/data/host_secret.json /opt/data/state.db /opt/data/.hermes_history /opt/data/errors.log
		chown 777:777 /opt/data/mine/keep
		ln -s /etc/hostname /opt/data/active_profile`)
	c := start(t, []string{"-v", vol + ":/opt/data", "-e", "PUID=1234", "-e", "PGID=1234",
		"-e", "HERMES_GATEWAY_BOOTSTRAP_STATE=running"}, "sleep", "infinity")
	c.booted()
	if ids := strings.TrimSpace(c.sh("root", "id -u hermes; id -g hermes")); ids != "1234\n1234" {
		t.Errorf("hermes ids %q, want 1234 and 1234", ids)
	}
	gw := c.waitState("gateway-default", "up", 30*time.Second, up)
	for what, pid := range map[string]int{"main": c.mainPID(), "gateway-default": gw.PID} {
		if uid, gid := c.procStatus(pid, "Uid"), c.procStatus(pid, "Gid"); uid != "1234 1234 1234 1234" || gid != "1234 1234 1234 1234" {
			t.Errorf("%s runs as uid %q gid %q, want 1234", what, uid, gid)
		}
	}
	owners := map[string]string{
		"/opt/data": "1234:1234", "/opt/data/profiles/coder/SOUL.md": "1234:1234",
		"/opt/data/sessions/old/s.json": "1234:1234", "/opt/data/auth.json": "1234:1234",
		"/opt/data/state.db": "1234:1234", "/opt/data/logs/gateways": "1234:1234",
		"/opt/data/.hermes_history": "1234:1234", "/opt/data/errors.log": "1234:1234", // hermes' own, written as root by docker exec
		"/opt/data/host_secret.json": "0:0", "/opt/data/mine/keep": "777:777", "/opt/data/mine": "1234:10000",
		"/etc/hostname": "0:0",
	}
	for p, want := range owners {
		if got := strings.TrimSpace(c.sh("root", "stat -c %u:%g "+p)); got != want {
			t.Errorf("%s owned by %s, want %s", p, got, want)
		}
	}
	if l := c.logs(); !strings.Contains(l, "refusing to go through symlink /opt/data/active_profile") ||
		!strings.Contains(l, "changing hermes UID to 1234") {
		t.Errorf("docker logs lack the remap or the refusing line:\n%s", l)
	}
	if s, ok := c.status("gateway-coder"); !ok || s.State != "down" {
		t.Errorf("gateway-coder %+v (registered %v), want a down slot", s, ok)
	}
}

// TestRemapFollowsOldUID: PUID on a volume the s6 image (or this one)
// left to UID 10000 gives the new UID what 10000 owned anywhere in it, as
// stage2's `usermod -u` does for hermes' home: backups, checkpoints and a
// user's notes.md are no allow-listed path, and hermes could no longer
// write them. The owner alone changes, as with usermod, a file with other
// hard links too (each link is 10000's: uv's cache and venvs); a file of
// another UID and what a symlink points to keep theirs. A docker restart
// (the account already remapped) walks nothing; one after a boot stopped
// in the walk (the account remapped, the change still recorded as
// pending, files of 10000 left) finishes it.
func TestRemapFollowsOldUID(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, `cd /opt/data && mkdir -p backups checkpoints/c1 other && touch notes.md backups/b.tar checkpoints/c1/f other/theirs linked &&
		ln linked backups/linked2 && ln -s /etc/hostname hostlink`)
	if r := runOnce(t, []string{"-v", vol + ":/opt/data", "--entrypoint", "/bin/sh"}, "-c",
		"chown 777:777 /opt/data/other/theirs && chown -h 10000:10000 /opt/data/hostlink"); r.code != 0 {
		t.Fatalf("setting up the volume: exit %d: %s", r.code, r.stderr)
	}
	c := start(t, []string{"-v", vol + ":/opt/data", "-e", "PUID=1234", "-e", "PGID=1234"}, "sleep", "infinity")
	c.booted()
	for p, want := range map[string]string{
		"/opt/data/backups": "1234:10000", "/opt/data/backups/b.tar": "1234:10000",
		"/opt/data/checkpoints/c1/f": "1234:10000", "/opt/data/notes.md": "1234:10000",
		"/opt/data/other": "1234:10000", "/opt/data/other/theirs": "777:777",
		"/opt/data/linked": "1234:10000", "/opt/data/backups/linked2": "1234:10000",
		"/opt/data/sessions": "1234:1234", "/etc/hostname": "0:0",
	} {
		if got := strings.TrimSpace(c.sh("root", "stat -c %u:%g "+p)); got != want {
			t.Errorf("%s owned by %s, want %s", p, got, want)
		}
	}
	if got := strings.TrimSpace(c.sh("root", "stat -c %u:%g /opt/data/hostlink")); got != "1234:10000" {
		t.Errorf("the symlink itself owned by %s, want 1234:10000", got)
	}
	if r := c.exec("hermes", "sh", "-c", "echo q >>/opt/data/notes.md && touch /opt/data/backups/new"); r.code != 0 {
		t.Errorf("hermes cannot write its own files after the remap: exit %d: %s", r.code, r.stderr)
	}
	want := "[hermes-setup] giving what UID 10000 owned in /opt/data to hermes' new UID 1234\n"
	l := c.logs()
	if strings.Count(l, want) != 1 || strings.Contains(l, "refusing") {
		t.Errorf("docker logs hold %q %d times, want once, and no refusal:\n%s", want, strings.Count(l, want), l)
	}
	if c.exists("/etc/hermes-uid-remap.pending") {
		t.Errorf("the remap is still recorded as pending after its walk")
	}
	must(t, "restart", c.id)
	c.booted()
	if n := strings.Count(c.logs(), want); n != 1 {
		t.Errorf("%q %d times after a restart, want once (the first boot's)", want, n)
	}
	// What a boot stopped in the walk leaves: the account remapped, the
	// change pending, files of 10000.
	c.sh("root", "echo 10000 >/etc/hermes-uid-remap.pending && chown -h 10000 /opt/data/notes.md /opt/data/checkpoints/c1/f")
	must(t, "restart", c.id)
	c.booted()
	for _, p := range []string{"/opt/data/notes.md", "/opt/data/checkpoints/c1/f"} {
		if got := strings.TrimSpace(c.sh("root", "stat -c %u:%g "+p)); got != "1234:10000" {
			t.Errorf("after the interrupted walk's boot, %s owned by %s, want 1234:10000", p, got)
		}
	}
	l = c.logs()
	if n := strings.Count(l, want); n != 2 || !strings.Contains(l, "[hermes-setup] finishing the UID change of an earlier boot: what UID 10000 owned goes to hermes\n") {
		t.Errorf("after the interrupted walk's boot: %q %d times (want 2) and no finishing line:\n%s", want, n, l)
	}
	if c.exists("/etc/hermes-uid-remap.pending") {
		t.Errorf("the remap is still recorded as pending after the walk that finished it")
	}
}

// TestOwnershipRepairFollowsUID: a volume hermes' UID owns under another
// group (a host dir shared through its group, setgid) keeps that group on
// the trees stage2 gives back only when the volume's top dir is not the
// hermes UID's (workspace, sessions, logs...), as the s6 image's
// stage2-hook.sh does: it compares the UID alone. What stage2 gives back
// on every boot (profiles/, the top-level state files) is hermes' group
// again. Before, a GID differing made the hook give back those trees too,
// recursively: the host's group lost the user's workspace at the move.
func TestOwnershipRepairFollowsUID(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, `mkdir -p /opt/data/workspace/proj /opt/data/sessions && echo code >/opt/data/workspace/proj/main.py &&
		touch /opt/data/sessions/s.json /opt/data/.env && `+seedProfile("coder"))
	if r := runOnce(t, []string{"-v", vol + ":/opt/data", "--entrypoint", "/bin/sh"}, "-c",
		"chown -R 10000:1000 /opt/data && chmod g+ws /opt/data/workspace"); r.code != 0 {
		t.Fatalf("setting up the volume: exit %d: %s", r.code, r.stderr)
	}
	c := start(t, []string{"-v", vol + ":/opt/data"}, "sleep", "infinity")
	c.booted()
	for p, want := range map[string]string{
		"/opt/data": "10000:1000", "/opt/data/workspace": "10000:1000", "/opt/data/workspace/proj/main.py": "10000:1000",
		"/opt/data/sessions/s.json":        "10000:1000",
		"/opt/data/profiles/coder/SOUL.md": "10000:10000", "/opt/data/.env": "10000:10000",
	} {
		if got := strings.TrimSpace(c.sh("root", "stat -c %u:%g "+p)); got != want {
			t.Errorf("%s owned by %s after the boot hook, want %s", p, got, want)
		}
	}
	c.waitState("gateway-coder", "up", 30*time.Second, up)
}

// TestRenderNodeOfRootNotJoined: a /dev/dri node of group 0 does not make
// hermes a member of root's group (it did: join_group added hermes to
// group root for it), nor one whose host gid is, in the image, a group
// that gives more than a GPU (tty here; shadow, disk... in hermes' image:
// a gid is what the kernel checks); the boot says why, once.
func TestRenderNodeOfRootNotJoined(t *testing.T) {
	t.Parallel()
	needEngine(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test makes a device node: run it as root, as CI does")
	}
	for _, g := range []struct {
		gid  int
		name string
	}{{0, "root"}, {5, "tty"}} {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			render := filepath.Join(t.TempDir(), "renderD128")
			if err := unix.Mknod(render, unix.S_IFCHR|0o660, int(unix.Mkdev(1, 3))); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(render, 0, g.gid); err != nil {
				t.Fatal(err)
			}
			c := start(t, []string{"-v", render + ":/dev/dri/renderD128"}, "sleep", "infinity")
			c.booted()
			if groups := strings.Fields(c.procStatus(c.mainPID(), "Groups")); slices.Contains(groups, fmt.Sprint(g.gid)) {
				t.Errorf("main has group %d: %v", g.gid, groups)
			}
			if members := strings.TrimSpace(c.sh("root", fmt.Sprintf("awk -F: '$3 == %d { print $4 }' /etc/group", g.gid))); strings.Contains(members, "hermes") {
				t.Errorf("group %s's members: %q, want no hermes", g.name, members)
			}
			want := fmt.Sprintf("warning: /dev/dri/renderD128 belongs to group %s (%d), which in this image gives more than a GPU: hermes is not added to it (give the node a group of its own)", g.name, g.gid)
			if n := strings.Count(c.logs(), want); n != 1 {
				t.Errorf("the boot said %d times %q, want once; logs:\n%s", n, want, c.logs())
			}
		})
	}
}

// TestGroupsKept: the groups the container was started with (--group-add)
// and the groups of a bind-mounted docker socket and /dev/dri render node
// reach main and the gateways; HERMES_REAL_HOME becomes HOME of the
// dashboard and the gateways and is created as hermes'.
func TestGroupsKept(t *testing.T) {
	t.Parallel()
	needEngine(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test makes a socket and a device node owned by other groups: run it as root, as CI does")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	render := filepath.Join(dir, "renderD128")
	if err := unix.Mknod(render, unix.S_IFCHR|0o660, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	for p, gid := range map[string]int{sock: 4343, render: 4444} {
		if err := os.Chown(p, 0, gid); err != nil {
			t.Fatal(err)
		}
	}
	c := start(t, []string{"--group-add", "4242", "-v", sock + ":/var/run/docker.sock", "-v", render + ":/dev/dri/renderD128",
		"-e", "HERMES_GATEWAY_BOOTSTRAP_STATE=running", "-e", "HERMES_DASHBOARD=1", "-e", "HERMES_REAL_HOME=/home/agent"},
		"sleep", "infinity")
	c.booted()
	gw := c.waitState("gateway-default", "up", 30*time.Second, up)
	dash := c.waitState("dashboard", "up", 30*time.Second, up)
	for what, pid := range map[string]int{"main": c.mainPID(), "gateway-default": gw.PID, "dashboard": dash.PID} {
		groups := strings.Fields(c.procStatus(pid, "Groups"))
		for _, g := range []string{"4242", "4343", "4444", "10000"} {
			if !slices.Contains(groups, g) {
				t.Errorf("%s has groups %v, want %s among them", what, groups, g)
			}
		}
		if slices.Contains(groups, "0") {
			t.Errorf("%s has root's group 0: %v", what, groups)
		}
	}
	for what, pid := range map[string]int{"gateway-default": gw.PID, "dashboard": dash.PID} {
		env := c.procEnv(pid)
		if env["HOME"] != "/home/agent" || env["HERMES_REAL_HOME"] != "/home/agent" {
			t.Errorf("%s: HOME=%q HERMES_REAL_HOME=%q, want /home/agent", what, env["HOME"], env["HERMES_REAL_HOME"])
		}
		// Today's hermes knows its supervised gateway by the s6 marker
		// only: without it, gateway run hands itself to the supervisor
		// again and becomes a heartbeat.
		s6marker := "1"
		if what == "dashboard" {
			s6marker = "" // as in the s6 image's dashboard/run
		}
		if env["HERMES_SUPERVISED_CHILD"] != "1" || env["HERMES_S6_SUPERVISED_CHILD"] != s6marker {
			t.Errorf("%s: HERMES_SUPERVISED_CHILD=%q HERMES_S6_SUPERVISED_CHILD=%q, want 1 and %q", what,
				env["HERMES_SUPERVISED_CHILD"], env["HERMES_S6_SUPERVISED_CHILD"], s6marker)
		}
	}
	if owner := strings.TrimSpace(c.sh("root", "stat -c %u:%g /home/agent")); owner != "10000:10000" {
		t.Errorf("/home/agent owned by %s, want hermes'", owner)
	}
}

// TestRemapRefusals: a UID another account has is refused (as usermod -u
// refuses it), read in decimal whatever its leading zeros; a GID change
// whose /etc/passwd cannot be written (bind-mounted) puts /etc/group back,
// so that the group named hermes stays hermes' own GID. One warning each.
func TestRemapRefusals(t *testing.T) {
	t.Parallel()
	needEngine(t)
	passwd := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(passwd, []byte(must(t, "run", "--rm", "--pull", "never", "--network", "none",
		"--label", runLabel, "--entrypoint", "cat", image, "/etc/passwd")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("uid taken", func(t *testing.T) {
		t.Parallel()
		c := start(t, []string{"-e", "HERMES_UID=065534"}, "sleep", "infinity")
		c.booted()
		if ids := strings.TrimSpace(c.sh("root", "id -u hermes")); ids != "10000" {
			t.Errorf("hermes has uid %s, want 10000 kept", ids)
		}
		if l := c.logs(); !strings.Contains(l, "[hermes-setup] warning: ignoring HERMES_UID/PUID 65534: it is the UID of account nobody; hermes keeps its UID") {
			t.Errorf("docker logs lack the refusal:\n%s", l)
		}
	})
	// A volume of the UID asked for stays that UID's when the remap
	// cannot be made (a read-only root): it went to hermes' 10000 whole,
	// on the host too, the opposite of what HERMES_UID was for.
	t.Run("read-only root", func(t *testing.T) {
		t.Parallel()
		vol := volume(t)
		seed(t, vol, "mkdir -p /opt/data/sessions && touch /opt/data/sessions/s.json")
		if r := runOnce(t, []string{"-v", vol + ":/opt/data", "--entrypoint", "/bin/sh"}, "-c", "chown -R 1000:1000 /opt/data"); r.code != 0 {
			t.Fatalf("setting up the volume: exit %d: %s", r.code, r.stderr)
		}
		c := start(t, []string{"-v", vol + ":/opt/data", "--read-only", "--tmpfs", "/run", "-e", "HERMES_UID=1000"}, "sleep", "infinity")
		c.booted()
		if got := strings.TrimSpace(c.sh("root", "stat -c %u:%g /opt/data /opt/data/sessions /opt/data/sessions/s.json")); got != "1000:1000\n1000:1000\n1000:1000" {
			t.Errorf("the volume of UID 1000 is owned %q after a refused remap, want 1000:1000 kept", got)
		}
		if l := c.logs(); !strings.Contains(l, "[hermes-setup] warning: /opt/data is UID 1000's, which hermes could not take: its files keep their owner, and hermes (10000) may not write them; run with --user 1000:1000, or without --read-only (the UID is changed in /etc/passwd at every start)") {
			t.Errorf("docker logs lack the warning:\n%s", l)
		}
	})
	t.Run("passwd bind-mounted", func(t *testing.T) {
		t.Parallel()
		c := start(t, []string{"-v", passwd + ":/etc/passwd", "-e", "PGID=2000"}, "sleep", "infinity")
		c.booted()
		if got := strings.TrimSpace(c.sh("root", "id -g hermes; grep '^hermes:' /etc/group | cut -d: -f3")); got != "10000\n10000" {
			t.Errorf("hermes' GID and its group's GID are %q, want 10000 and 10000", got)
		}
		l := c.logs()
		if !strings.Contains(l, "[hermes-setup] warning: cannot change /etc/passwd (read-only or bind-mounted?); hermes keeps its GID") {
			t.Errorf("docker logs lack the warning:\n%s", l)
		}
		if strings.Contains(l, "cannot put /etc/group back") {
			t.Errorf("/etc/group was not put back:\n%s", l)
		}
	})
}

// TestPlantedDockerSocketNotJoined: /run is 1777 and docker restart keeps
// it, so hermes can put a symlink to another of root's sockets at
// /run/docker.sock; the boot joins the group of the docker socket itself
// only, not of what a link leads to. (Before, a symlink was refused only by
// accident: stat -c %g gave the link's own group, hermes'. A hard link,
// which fs.protected_hardlinks=0 allows, is refused by its link count; a
// test cannot change that host-wide setting.)
func TestPlantedDockerSocketNotJoined(t *testing.T) {
	t.Parallel()
	needEngine(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test makes a socket owned by another group: run it as root, as CI does")
	}
	sock := filepath.Join(t.TempDir(), "ops.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chown(sock, 0, 4545); err != nil {
		t.Fatal(err)
	}
	c := start(t, []string{"-v", sock + ":/srv/ops.sock"}, "sleep", "infinity")
	c.booted()
	c.sh("hermes", "ln -s /srv/ops.sock /run/docker.sock")
	must(t, "restart", c.id)
	c.booted()
	if groups := strings.Fields(c.procStatus(c.mainPID(), "Groups")); slices.Contains(groups, "4545") {
		t.Errorf("main has groups %v: hermes joined the group of a socket its symlink led to", groups)
	}
	if l := c.logs(); strings.Contains(l, "added hermes to group") {
		t.Errorf("the boot joined a group through hermes' symlink:\n%s", l)
	}
}
