package docker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// minimalCaps are the capabilities docs/image.md names for
// --cap-drop ALL (and Kubernetes' capabilities.drop: [ALL]).
var minimalCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"}

// exercise drives a booted container through what every run mode must
// support: a profile's gateway up and stopped by hermes, the dashboard up,
// the gateway running as hermes, main's program reachable as user.
func exercise(t *testing.T, c *ctr, user string) {
	t.Helper()
	c.waitState("dashboard", "up", 30*time.Second, up)
	if out := c.hermes("profile", "create", "worker"); !strings.Contains(out, "Created profile worker") {
		t.Errorf("profile create said %q", out)
	}
	c.hermes("-p", "worker", "gateway", "start")
	s := c.waitState("gateway-worker", "up", 20*time.Second, up)
	if uid := strings.TrimSpace(c.readFile("/proc/" + strconv.Itoa(s.PID) + "/status")); !strings.Contains(uid, "\nUid:\t10000\t10000\t10000\t10000\n") {
		t.Errorf("gateway not running as 10000:\n%s", uid)
	}
	c.hermes("-p", "worker", "gateway", "stop")
	checkState(t, "worker", c.gatewayState(home+"/profiles/worker/gateway_state.json"),
		map[string]string{"gateway_state": "stopped", "desired_state": "stopped"})
	if r := c.exec(user, "hermes", "chat", "-q", "still here"); r.code != 0 || r.stdout != "hermes: you said still here\n" {
		t.Errorf("hermes chat in the container: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
}

// TestReadOnlyRoot: --read-only with a tmpfs on /run (Kubernetes'
// readOnlyRootFilesystem with an emptyDir on /run) loses nothing.
func TestReadOnlyRoot(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"--read-only", "--tmpfs", "/run", "-e", "HERMES_DASHBOARD=1"}, "sleep", "infinity")
	c.booted()
	exercise(t, c, "hermes")
	if r := c.exec("root", "touch", "/etc/x"); r.code == 0 {
		t.Errorf("the root filesystem is writable")
	}
}

// TestReadOnlyRunWithoutTmpfs: a read-only /run costs the control socket
// and the scandir, not the container: one error line says what to do and
// main runs with its exit status.
func TestReadOnlyRunWithoutTmpfs(t *testing.T) {
	t.Parallel()
	r := runOnce(t, []string{"--read-only"}, "chat", "-q", "ro")
	if r.code != 0 || r.stdout != "hermes: you said ro\n" {
		t.Errorf("--read-only chat -q ro: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "mount a tmpfs there") {
		t.Errorf("no error line saying to mount a tmpfs:\n%s", r.stderr)
	}
	// Errors about names that are not there (EROFS comes before ENOENT).
	if strings.Contains(r.stderr, "clear /run/s6") || strings.Contains(r.stderr, "gateway.pid") {
		t.Errorf("an error about a file that is not there:\n%s", r.stderr)
	}
	// hsvc, the image's HEALTHCHECK, says what is wrong.
	c := start(t, []string{"--read-only"}, "sleep", "infinity")
	waitFor(t, "main", 10*time.Second, func() bool { return strings.Contains(c.logs(), "main started") })
	st := c.exec("hermes", "hsvc", "status")
	if want := "hsvc: hinit has no control socket at /run/hinit/control.sock: /run is read-only; mount a tmpfs on it (docker run --tmpfs /run)\n"; st.code != 5 || st.stderr != want {
		t.Errorf("hsvc status with a read-only /run: exit %d, %q; want 5, %q", st.code, st.stderr, want)
	}
}

// TestReadOnlyVolume: a volume mounted read-only (an inspection of a
// backup) runs main, and the boot warns only about what it could not do:
// it warned that it could not remove gateway.pid and processes.json, which
// were not there (a read-only file system says EROFS first).
func TestReadOnlyVolume(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, "mkdir -p /opt/data/sessions")
	r := runOnce(t, []string{"-v", vol + ":/opt/data:ro"}, "chat", "-q", "ro")
	if r.code != 0 || r.stdout != "hermes: you said ro\n" {
		t.Errorf("chat -q ro on a read-only volume: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "gateway.pid") || strings.Contains(r.stderr, "processes.json") {
		t.Errorf("a warning about a file that is not there:\n%s", r.stderr)
	}
}

// TestUser10000: docker run --user 10000:10000 (Kubernetes runAsUser):
// hinit is not root, drops nothing, and everything works as hermes.
func TestUser10000(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"--user", "10000:10000", "-e", "HERMES_DASHBOARD=1"})
	c.booted()
	waitFor(t, "the banner of main", 10*time.Second, func() bool {
		return strings.Contains(c.logs(), "Hermes Agent (fake) ready: pid=")
	})
	if l := c.logs(); !strings.Contains(l, "uid=10000 gid=10000") {
		t.Errorf("main not running as 10000:10000:\n%s", l)
	}
	exercise(t, c, "")
}

// TestCapDropAll: --cap-drop ALL plus the capabilities the docs name is
// enough for everything, docker restart included (the scandir of the
// previous boot belongs to hermes and must be wiped).
func TestCapDropAll(t *testing.T) {
	t.Parallel()
	opts := []string{"--cap-drop", "ALL", "-e", "HERMES_DASHBOARD=1"}
	for _, c := range minimalCaps {
		opts = append(opts, "--cap-add", c)
	}
	c := start(t, opts, "sleep", "infinity")
	c.booted()
	exercise(t, c, "hermes")
	c.hermes("-p", "worker", "gateway", "start")
	c.waitState("gateway-worker", "up", 20*time.Second, up)
	if l := c.logs(); strings.Contains(l, "hinit: error") || strings.Contains(l, "warning: cannot") {
		t.Errorf("errors with the minimal capabilities:\n%s", l)
	}
	must(t, "restart", c.id)
	c.booted()
	c.waitState("gateway-worker", "up after docker restart", 30*time.Second, up)
	c.waitState("dashboard", "up after docker restart", 30*time.Second, up)
	if l := c.logs(); strings.Contains(l, "hinit: error") {
		t.Errorf("errors after docker restart with the minimal capabilities:\n%s", l)
	}
}

// TestHealthcheck: the image's HEALTHCHECK (hsvc check) reports healthy.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"--health-interval", "1s", "--health-start-period", "0s"}, "sleep", "infinity")
	waitFor(t, "docker to report healthy", 30*time.Second, func() bool {
		return c.inspect("{{.State.Health.Status}}") == "healthy"
	})
	if hc := c.inspect("{{json .Config.Healthcheck.Test}}"); hc != `["CMD","/usr/local/bin/hsvc","check"]` {
		t.Errorf("HEALTHCHECK %s", hc)
	}
}

// TestPidsLimit: a service that takes every pid the container may have
// (--pids-limit, Kubernetes' podPidsLimit) while another floods its log
// file (a rotation every few milliseconds, each through asuser) and a
// third cannot fork: PID 1 lives on, and the container exits with main's
// status. Before, the Go runtime could not make a thread it needed and
// ended hinit ("fatal error: newosproc"), exit 2: every log rotation
// destroyed one of its threads, and the runtime had to make another.
func TestPidsLimit(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "hinit.yaml")
	// read -t on a FIFO opened read-write: a wait that needs no fork. The
	// hog takes the pids once main has started (its mark), so that main's
	// own start never competes with it.
	yaml := `user: hermes
services:
  hog: {command: [bash, -c, 'mkfifo /tmp/h 2>/dev/null; until [ -e /tmp/main-up ]; do read -t 0.05 <> /tmp/h; done; i=0; while [ $i -lt 60 ]; do sleep 6 & i=$((i+1)); done 2>/dev/null; wait; exec sleep 100'], restart: always}
  chatty: {command: [bash, -c, 'while :; do echo "chatty line chatty line chatty line"; done'], log: {dir: /tmp/chatty, max_size: 256KiB, keep: 2, console: false}}
  crashy: {command: [sh, -c, 'echo crashy run; exit 1'], restart: always, backoff: {initial: 100ms, max: 1s, reset_after: 10s}}
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runOnce(t, []string{"--pids-limit", "40", "-v", cfg + ":/etc/hinit/hinit.yaml:ro"},
		"bash", "-c", "mkfifo /tmp/w && : >/tmp/main-up && read -t 8 <> /tmp/w; exit 33")
	if r.code != 33 || strings.Contains(r.stderr, "fatal error") {
		t.Errorf("exit %d, want main's 33:\n%s", r.code, r.stderr)
	}
}

// TestPidsLimitNamed: a service that fails because the container's pids
// limit refused its fork (busybox sh's "can't fork") is said to have met
// the limit; a bare exit 2 said nothing of why. What it forked is killed
// with it (its process group), so hsvc gets its threads back.
func TestPidsLimitNamed(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"--pids-limit", "60"}, "sleep", "infinity")
	c.booted()
	c.s6Dir("hermes", "forker", map[string]string{"service.yaml": "command: [sh, -c, 'while :; do sleep 100 & done']\nrestart: never\n"})
	s := c.waitState("forker", "exited", 30*time.Second, func(s svc) bool { return s.State == "exited" })
	if s.LastExit == nil || s.LastExit.Code != 2 || !s.LastExit.PidsLimit {
		t.Errorf("forker ended %+v, want exit 2, the pids limit", s.LastExit)
	}
	const why = "exit 2, the container's pids limit refused a new process or thread meanwhile"
	if table := c.sh("hermes", "hsvc status forker"); !strings.Contains(table, "2 (pids limit)") || !strings.Contains(table, why) {
		t.Errorf("hsvc status forker:\n%s\nwant 2 (pids limit) and why", table)
	}
}

// TestCapDropSetgid: root without CAP_SETGID cannot run main as hermes,
// and says so: one line naming the user and the capabilities, exit 126.
// Before, it read "exec hermes: operation not permitted", which blamed the
// program.
func TestCapDropSetgid(t *testing.T) {
	t.Parallel()
	r := runOnce(t, []string{"--cap-drop", "SETGID"}, "chat", "-q", "hi")
	want := "main: cannot run hermes as user hermes (10000:10000): operation not permitted: hinit needs CAP_SETUID and CAP_SETGID for that"
	if r.code != 126 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want 126 and %q:\n%s", r.code, want, r.stderr)
	}
}

// TestMemoryLimit: --memory with a service that outgrows it. The kernel's
// OOM killer ends the service, not hinit; hsvc says it ran out of memory
// (a bare SIGKILL said nothing of why); main and hsvc go on.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"--memory", "64m", "--memory-swap", "64m"}, "sleep", "infinity")
	c.booted()
	c.s6Dir("hermes", "hog", map[string]string{"service.yaml": `command: [bash, -c, "x=$(head -c 400000000 /dev/zero | tr '\\0' a)"]` + "\nrestart: never\n"})
	s := c.waitState("hog", "exited", 30*time.Second, func(s svc) bool { return s.State == "exited" })
	if s.LastExit == nil || s.LastExit.Signal != "KILL" || !s.LastExit.OOM {
		t.Errorf("hog ended %+v, want SIGKILL, out of memory", s.LastExit)
	}
	if table := c.sh("hermes", "hsvc status hog"); !strings.Contains(table, "SIGKILL (OOM)") || !strings.Contains(table, "out of memory") {
		t.Errorf("hsvc status hog:\n%s\nwant SIGKILL (OOM) and why", table)
	}
	if r := c.exec("hermes", "hsvc", "check"); r.code != 0 {
		t.Errorf("hsvc check after the OOM kill: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
}
