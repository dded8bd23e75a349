package pid1

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/control"
	"hinit/internal/testcg"
	"hinit/internal/testprog"
)

var (
	member   = &syscall.Credential{Uid: 10000, Gid: 10000}
	outsider = &syscall.Credential{Uid: 10001, Gid: 10001}
)

// publishDir builds a service dir under a dot name and renames it into the
// scandir, as writers must.
func publishDir(t *testing.T, p *initProc, name, yaml string, uid int, down bool) {
	t.Helper()
	tmp := filepath.Join(p.dir, "service", "."+name+".tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte(yaml), 0o644)
	if down {
		os.WriteFile(filepath.Join(tmp, "down"), nil, 0o644)
	}
	if uid != 0 {
		for _, f := range []string{tmp, filepath.Join(tmp, "service.yaml")} {
			os.Lchown(f, uid, uid)
		}
	}
	if err := os.Rename(tmp, filepath.Join(p.dir, "service", name)); err != nil {
		t.Fatal(err)
	}
}

type statusJSON struct {
	Services []struct {
		Name, State, Reason, Source string
		PID                         int
	}
}

func (p *initProc) statusOf(name string) (state, reason string) {
	p.t.Helper()
	code, out, errOut := p.hsvc(nil, "status", "--json")
	if code != 0 {
		p.t.Fatalf("hsvc status: %d %s", code, errOut)
	}
	var st statusJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		p.t.Fatalf("status json %q: %v", out, err)
	}
	for _, s := range st.Services {
		if s.Name == name {
			return s.State, s.Reason
		}
	}
	return "", ""
}

// Dynamic services end to end: a dir renamed into the scandir runs at once;
// a dir owned by the hermes user runs as that user whatever its YAML says;
// a broken service.yaml is reported with file:line and disturbs nobody; a
// removed dir's service is stopped and forgotten; a down file registers
// without starting; services_max refuses the extra dir.
func TestScandirServices(t *testing.T) {
	testprog.ExposeBinary(t)
	p := startInit(t, initOpts{config: "services_max: 3\n", args: []string{"sleep", "60"}})
	p.waitOutput("main started", true)
	env := `env: {HINIT_TESTPROG: "1"}` + "\n"

	publishDir(t, p, "sleeper", "command: "+prog("sleep", "inf")+"\n"+env, 0, false)
	if code, _, e := p.hsvc(nil, "wait", "sleeper", "--up", "--timeout", "10s"); code != 0 {
		t.Fatalf("sleeper not up: %d %s", code, e)
	}

	publishDir(t, p, "who", "command: "+prog("whoami")+"\nuser: root\nrestart: never\n"+env, 10000, false)
	p.waitOutput("[who] uid=10000 gid=10000", false)

	publishDir(t, p, "broken", "command: [x]\nrestart: sometimes\n", 0, false)
	testprog.WaitFor(t, 10*time.Second, "broken service reported", func() bool {
		_, reason := p.statusOf("broken")
		return strings.Contains(reason, "service.yaml:2: ") && strings.Contains(reason, "sometimes")
	})
	if state, _ := p.statusOf("sleeper"); state != "up" {
		t.Errorf("neighbour of a broken dir is %q, want up", state)
	}

	publishDir(t, p, "lazy", "command: [/bin/true]\n", 0, true)
	publishDir(t, p, "extra", "command: [/bin/true]\n", 0, false)
	testprog.WaitFor(t, 10*time.Second, "lazy registered down, extra refused", func() bool {
		lazy, _ := p.statusOf("lazy")
		_, why := p.statusOf("extra")
		return lazy == "down" && why == "refused: more than 3 services (services_max)"
	})

	os.RemoveAll(filepath.Join(p.dir, "service", "sleeper"))
	testprog.WaitFor(t, 10*time.Second, "sleeper forgotten", func() bool {
		code, _, _ := p.hsvc(nil, "status", "sleeper")
		return code == 3
	})
	if !strings.Contains(p.stderr.String(), "service dir removed: stopping svc=sleeper") {
		t.Errorf("removal not logged:\n%s", p.stderr)
	}
	p.signal(syscall.SIGTERM)
	p.wait(10 * time.Second)
}

// hsvc as root, as a member of the control group and as an outsider: the
// hermes user registers, starts and stops a gateway without root rights;
// an outsider gets "permission denied" (exit 4) and changes nothing;
// shutdown is root's alone and sets the exit status.
func TestHsvcPermissions(t *testing.T) {
	testprog.ExposeBinary(t)
	cfg := fmt.Sprintf(`user: "10000:10000"
templates:
  gateway:
    command: %s
    env: {HINIT_TESTPROG: "1"}
services:
  guarded:
    command: [sleep, "60"]
    protected: true
`, prog("sleep", "inf"))
	p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}})
	p.waitOutput("main started", true)
	run := func(cred *syscall.Credential, want int, args ...string) string {
		t.Helper()
		code, out, errOut := p.hsvc(cred, args...)
		if code != want {
			t.Fatalf("hsvc %v as %v: exit %d, want %d; stderr %q", args, cred, code, want, errOut)
		}
		return out + errOut
	}
	run(outsider, 4, "register", "gateway", "coder")
	run(member, 0, "register", "gateway", "coder", "--down")
	if state, _ := p.statusOf("gateway-coder"); state != "down" {
		t.Fatalf("registered --down gateway is %q", state)
	}
	run(outsider, 4, "start", "gateway-coder")
	run(member, 0, "start", "gateway-coder", "--wait=10s")
	run(member, 4, "stop", "guarded")
	run(member, 0, "status", "guarded")
	run(outsider, 4, "status")
	run(member, 0, "stop", "gateway-coder", "--wait=10s")
	if state, _ := p.statusOf("gateway-coder"); state != "down" {
		t.Errorf("stopped gateway is %q", state)
	}
	run(member, 0, "unregister", "gateway-coder")
	run(nil, 3, "status", "gateway-coder")
	if out := run(member, 4, "shutdown"); !strings.Contains(out, "only root") {
		t.Errorf("member shutdown: %q", out)
	}
	run(nil, 0, "shutdown", "--exit-code", "42")
	if code := p.wait(10 * time.Second); code != 42 {
		t.Errorf("hsvc shutdown --exit-code 42: container exited %d", code)
	}
}

// TestExitWaitsForControlAnswers: hinit's exit waits for the control
// server's answers in flight: a client connected and silent when hinit
// exits is told so. They lost their race with the exit, hsvc shutdown's
// own at times (exit 1, "hinit closed the connection without one").
func TestExitWaitsForControlAnswers(t *testing.T) {
	p := startInit(t, initOpts{args: []string{"sleep", "60"}})
	p.waitOutput("main started", true)
	rt := filepath.Join(p.dir, "run")
	silent, err := net.Dial("unix", filepath.Join(rt, control.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	testprog.WaitFor(t, 10*time.Second, "the connection accepted", func() bool { return testprog.Accepted(t, rt) == 1 })
	p.signal(syscall.SIGTERM)
	if code := p.wait(10 * time.Second); code != 143 {
		t.Fatalf("hinit exited %d after SIGTERM, want main's 143", code)
	}
	silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(silent)
	if !strings.Contains(string(b), "hinit is exiting") {
		t.Fatalf("a client connected while hinit exited read %q (%v), want hinit's answer", b, err)
	}
}

// A changed service.yaml of a running service applies at its next start
// (hsvc restart --wait), never earlier; hsvc logs reads its log; hsvc check
// passes while nothing essential failed.
func TestServiceYAMLChangeLogsAndCheck(t *testing.T) {
	p := startInit(t, initOpts{args: []string{"sleep", "60"}, config: `services:
  critical:
    command: [/bin/sh, -c, "exit 4"]
    restart: never
    essential: false
`})
	p.waitOutput("main started", true)
	logDir := filepath.Join(p.dir, "logs")
	yaml := func(word string) string {
		return fmt.Sprintf("command: [/bin/sh, -c, 'echo %s; exec sleep 60']\nlog: {dir: %s}\n", word, logDir)
	}
	publishDir(t, p, "web", yaml("first"), 0, false)
	p.waitOutput("[web] first", false)
	// Rewrite atomically, as writers must.
	tmp := filepath.Join(p.dir, "service", "web", ".service.yaml.tmp")
	os.WriteFile(tmp, []byte(yaml("second")), 0o644)
	os.Rename(tmp, filepath.Join(p.dir, "service", "web", "service.yaml"))
	time.Sleep(100 * time.Millisecond) // give a wrong implementation the chance to restart it
	if strings.Contains(p.stdout.String(), "[web] second") {
		t.Fatal("a running service was restarted because its file changed")
	}
	if code, _, e := p.hsvc(nil, "restart", "web", "--wait=10s"); code != 0 {
		t.Fatalf("restart: %d %s", code, e)
	}
	p.waitOutput("[web] second", false)
	code, out, _ := p.hsvc(nil, "logs", "web", "-n", "5")
	if code != 0 || !strings.Contains(out, "Z first\n") || !strings.Contains(out, "Z second\n") {
		t.Errorf("hsvc logs: %d %q", code, out)
	}
	if code, out, errOut := p.hsvc(nil, "check"); code != 0 {
		t.Errorf("check with nothing essential failed: %d %s %s", code, out, errOut)
	}
	p.signal(syscall.SIGTERM)
	p.wait(10 * time.Second)
}

// An essential service that gives up ends the container with its status.
func TestEssentialGiveUpEndsContainer(t *testing.T) {
	p := startInit(t, initOpts{args: []string{"sleep", "60"}, config: `services:
  critical:
    command: [/bin/sh, -c, "exit 4"]
    restart: on-failure
    backoff: {initial: 10ms, max: 10ms}
    give_up: {restarts: 1, within: 1m}
    essential: true
`})
	code := p.wait(15 * time.Second)
	if code != 4 {
		t.Errorf("essential service gave up with 4: container exited %d", code)
	}
}

// A root hinit without CAP_KILL cannot signal another user's service:
// hsvc stop says so at once instead of leaving it "stopping" for ever, and
// hsvc unregister fails with the same reason and leaves the service as it
// was.
func TestStopWithoutCapKill(t *testing.T) {
	cfg := "services:\n  other: {command: [sleep, '60'], user: '10000:10000'}\n"
	p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}, dropCaps: "-kill"})
	p.waitOutput("started svc=other", true)
	publishDir(t, p, "theirs", "command: [sleep, '60']\n", 10000, false)
	p.waitOutput("started svc=theirs", true)
	code, _, errOut := p.hsvc(nil, "unregister", "theirs")
	if code != 1 || !strings.Contains(errOut, "unregister theirs: send SIGTERM") || !strings.Contains(errOut, "CAP_KILL") {
		t.Errorf("unregister without CAP_KILL: exit %d, %q", code, errOut)
	}
	if state, _ := p.statusOf("theirs"); state != "up" {
		t.Errorf("after a failed unregister: %q, want up", state)
	}
	if _, err := os.Lstat(filepath.Join(p.dir, "service", "theirs")); err != nil {
		t.Errorf("dir of a service whose unregister failed: %v", err)
	}
	code, _, errOut = p.hsvc(nil, "stop", "other")
	if code != 1 || !strings.Contains(errOut, "operation not permitted (hinit needs CAP_KILL") {
		t.Errorf("stop without CAP_KILL: exit %d, %q", code, errOut)
	}
	if state, reason := p.statusOf("other"); state != "up" || !strings.HasPrefix(reason, "cannot stop: ") {
		t.Errorf("after a failed stop: %s %q, want up and the reason", state, reason)
	}
}

// TestHsvcInterruptedWait: SIGINT ends an hsvc wait at once with "interrupted"
// (exit 1), and hinit goes on answering. hsvc catches SIGINT only for the
// verbs that wait, from before it connects, so the test sends it once hsvc
// holds its socket.
func TestHsvcInterruptedWait(t *testing.T) {
	cfg := fmt.Sprintf("services:\n  d: {command: %s}\n", prog("sleep", "inf"))
	p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}})
	defer func() { p.signal(syscall.SIGTERM); p.wait(10 * time.Second) }()
	p.waitOutput("main started", true)
	self := testprog.Command("x")[0]
	cmd := exec.Command(self, "hsvc", "wait", "d", "--down", "--timeout", "60s")
	cmd.Env = []string{"HINIT_TEST_AS_HSVC=1", "HINIT_RUNTIME_DIR=" + filepath.Join(p.dir, "run")}
	var errb testprog.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// hsvc installs its handler before it connects: wait for the socket.
	testprog.WaitFor(t, 10*time.Second, "hsvc connected", func() bool {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		for _, fd := range fds {
			if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", cmd.Process.Pid, fd.Name())); strings.HasPrefix(l, "socket:") {
				return true
			}
		}
		return false
	})
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("interrupted wait: exit %d, stderr %q; want 1 and interrupted", code, errb.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("SIGINT took %v to end the wait", d)
	}
	if code, out, _ := p.hsvc(nil, "status", "d"); code != 0 || !strings.Contains(out, " up ") {
		t.Errorf("status after the interrupted wait: %d %q", code, out)
	}
}

// hsvc unregister of a service that ignores TERM: without --wait hsvc
// answers before the stop ends and the service is gone (name forgotten,
// dir removed) once its stop timeout has killed it; with --wait the answer
// comes when the wait runs out, while it is stopping, and the removal
// still happens. The dirs are root's in
// a scandir of the image's user: root's request removes them with root's
// rights.
func TestUnregisterIgnoringTerm(t *testing.T) {
	testprog.ExposeBinary(t)
	p := startInit(t, initOpts{config: `user: "10000:10000"` + "\n", args: []string{"sleep", "60"}})
	p.waitOutput("main started", true)
	def := "command: " + prog("ignore-term", "3") + "\nready: {notify_fd: 3}\nstop: {timeout: 2s}\n" +
		`env: {HINIT_TESTPROG: "1"}` + "\n"
	for _, name := range []string{"stubborn", "bounded"} {
		publishDir(t, p, name, def, 0, false)
		if code, _, e := p.hsvc(nil, "wait", name, "--ready", "--timeout", "10s"); code != 0 {
			t.Fatalf("%s not ready: %d %s", name, code, e)
		}
	}
	gone := func(name string) func() bool {
		return func() bool {
			_, err := os.Lstat(filepath.Join(p.dir, "service", name))
			code, _, _ := p.hsvc(nil, "status", name)
			return os.IsNotExist(err) && code == 3
		}
	}

	// Not waited for: the answer comes before the stop's kill at its 2 s
	// timeout, which hinit logs (an order, not a time: a loaded machine
	// slows both sides alike).
	if code, _, e := p.hsvc(nil, "unregister", "stubborn"); code != 0 {
		t.Fatalf("unregister: exit %d %s", code, e)
	}
	if strings.Contains(p.stderr.String(), "killing process group svc=stubborn") {
		t.Errorf("unregister without --wait answered after the stop's kill:\n%s", p.stderr)
	}
	testprog.WaitFor(t, 15*time.Second, "stubborn gone", gone("stubborn"))

	// Waited for 500 ms: the answer says the stop still runs.
	code, _, e := p.hsvc(nil, "unregister", "bounded", "--wait=500ms")
	if code != 6 || !strings.Contains(e, "timed out after 500ms waiting for bounded to stop (it is stopping)") {
		t.Errorf("unregister --wait=500ms: exit %d: %s", code, e)
	}
	testprog.WaitFor(t, 15*time.Second, "bounded gone", gone("bounded"))
	p.signal(syscall.SIGTERM)
	p.wait(10 * time.Second)
}

// An open files limit below what services_max allows the hermes user's
// services to hold in hinit is said at boot, with what to do; a limit that
// covers it says nothing.
func TestFileLimitBelowServicesMax(t *testing.T) {
	for _, tc := range []struct {
		max  int
		warn bool
	}{{1000, true}, {100, false}} {
		p, code := runInit(t, initOpts{config: fmt.Sprintf("services_max: %d\n", tc.max), args: []string{"true"},
			wrap: []string{"prlimit", "--nofile=1024:1024"}})
		out := p.stderr.String()
		warned := strings.Contains(out, "the open files limit (1024) is below what 1000 services may hold in hinit (about 4256)")
		if code != 0 || warned != tc.warn || tc.warn && !strings.Contains(out, "--ulimit nofile=4256") {
			t.Errorf("services_max %d: exit %d, warned %v, want %v:\n%s", tc.max, code, warned, tc.warn, out)
		}
	}
}

// A tmpfs the hermes user may write that can hold as much as the
// container's memory limit is said at boot: filled, its pages would make
// the kernel's OOM killer end hinit. /run here is a tmpfs of no size given
// (half the host's memory), of 256 MiB or of 16 MiB, in a cgroup limited
// to 256 MiB (root only: a real cgroup, a PID and mount namespace).
func TestTmpfsAboveMemoryLimit(t *testing.T) {
	cg := testcg.Memory(t, 256<<20)
	enter := []string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, cg.Procs()}
	warning := regexp.MustCompile(`the tmpfs /run \(\d+ MiB\).* may hold as much as the container's memory limit \(256 MiB\)`)
	for _, tc := range []struct {
		opts string
		warn bool
	}{{"mode=755", true}, {"mode=755,size=256m", true}, {"mode=755,size=16m", false}} {
		p, code := runInit(t, initOpts{wrap: enter, tmpfsRun: tc.opts, args: []string{"true"}})
		if warned := warning.MatchString(p.stderr.String()); code != 0 || warned != tc.warn {
			t.Errorf("/run mounted %s: exit %d, warned %v, want %v:\n%s", tc.opts, code, warned, tc.warn, p.stderr)
		}
	}
}

// tmpfsOver names each tmpfs once, at the first path given on it, when
// it may hold the limit; a filesystem that is not a tmpfs is no concern.
func TestTmpfsOver(t *testing.T) {
	var fs unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &fs); err != nil || fs.Type != unix.TMPFS_MAGIC || fs.Blocks == 0 {
		t.Skip("/dev/shm is not a tmpfs of a given size here")
	}
	size := int64(fs.Blocks) * fs.Bsize
	want := []string{fmt.Sprintf("the tmpfs /dev/shm (%d MiB)", size>>20)}
	if got := tmpfsOver(size, "", "/dev/shm", "/dev/shm/.", "/proc"); !slices.Equal(got, want) {
		t.Errorf("tmpfsOver(its size) = %q, want %q", got, want)
	}
	if got := tmpfsOver(size+1, "/dev/shm", "/proc"); len(got) != 0 {
		t.Errorf("tmpfsOver(its size + 1) = %q, want nothing", got)
	}
}

// A boot hook and main that fail because the container's pids limit
// refused a process say so, as a service's failed start does: the hook's
// shell says only "Cannot fork", main's exec "resource temporarily
// unavailable". The hook's sleeps, each in a session of its own, outlive
// it; the static service takes the slot the hook's own exit freed.
func TestPidsLimitNamedForHookAndMain(t *testing.T) {
	cg := testcg.Pids(t, 48)
	enter := []string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, cg.Procs()}
	cfg := `boot:
  - name: fill
    on_failure: continue
    command: [/bin/sh, -c, 'i=0; while [ $i -lt 80 ]; do setsid sleep 1000 & i=$((i+1)); done']
services:
  svc: {command: [sleep, "1000"]}
`
	p, code := runInit(t, initOpts{wrap: enter, config: cfg, args: []string{"/bin/true"}})
	stderr := p.stderr.String()
	hook := `hook=fill err="exit status 2, the container's pids limit refused a new process or thread meanwhile"`
	main := "main: exec /bin/true: resource temporarily unavailable; the container's pids limit refused a new process or thread meanwhile"
	if code != 126 || !strings.Contains(stderr, hook) || !strings.Contains(stderr, main) {
		t.Errorf("exit %d, want 126, and the hook's failure and main's both put down to the pids limit:\n%s", code, stderr)
	}
}
