package pid1

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/control"
	"hinit/internal/testprog"
)

const gatewayConfig = `user: "10000:10000"
templates:
  gateway:
    command: %[1]s
    env: {HINIT_TESTPROG: "1"}
    overrides:
      default:
        command: %[2]s
        stop: {signal: TERM, timeout: 5s, planned_stop_marker: "${HERMES_HOME}/.gateway-planned-stop.json"}
    restart: always
    no_restart_exit_codes: [0, 78]
    stop: {signal: TERM, timeout: 5s, planned_stop_marker: "${HERMES_HOME}/profiles/{instance}/.gateway-planned-stop.json"}
reconcile: {home: "${HERMES_HOME}", template: gateway}
`

// writeHome builds a hermes volume owned by uid 10000: a running root
// profile, a profile whose desired_state (running) overrides its stale
// gateway_state, a stopped one, a corrupt one, and a dir without SOUL.md.
func writeHome(t *testing.T) string {
	home := filepath.Join(testprog.PublicDir(t), "home")
	files := map[string]string{
		"gateway_state.json":                 `{"gateway_state":"running","extra":{"keep":[1,2]}}`,
		"profiles/coder/SOUL.md":             "coder",
		"profiles/coder/gateway_state.json":  `{"gateway_state":"stopped","desired_state":"running"}`,
		"profiles/coder/gateway.pid":         "4242",
		"profiles/idle/SOUL.md":              "idle",
		"profiles/idle/gateway_state.json":   `{"gateway_state":"stopped"}`,
		"profiles/broken/SOUL.md":            "broken",
		"profiles/broken/gateway_state.json": `{"gateway_state":`,
		"profiles/notes/README":              "not a profile",
	}
	for name, content := range files {
		p := filepath.Join(home, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	filepath.Walk(home, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 10000, 10000) })
	return home
}

// gatewayBoot returns a function that boots hinit with the gateway
// template over home and a sleeping main, as a container start does.
func gatewayBoot(t *testing.T, home string) func() *initProc {
	cfg := fmt.Sprintf(gatewayConfig, prog("gateway", "${HERMES_HOME}/profiles/{instance}"), prog("gateway", "${HERMES_HOME}"))
	return func() *initProc {
		p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}, env: []string{"HERMES_HOME=" + home}})
		p.waitOutput("main started", true)
		return p
	}
}

// docker restart is invisible: gateways that were running come back,
// stopped ones stay down, stale pid files go, the boot log says what
// happened; hsvc stop records desired_state and writes the planned-stop
// marker, while a container shutdown records nothing.
func TestReconcileAcrossRestarts(t *testing.T) {
	testprog.ExposeBinary(t)
	home := writeHome(t)
	boot := gatewayBoot(t, home)

	p := boot()
	p.waitOutput("[gateway-default] gateway up", false)
	p.waitOutput("[gateway-coder] gateway up", false)
	for name, want := range map[string]string{"gateway-default": "up", "gateway-coder": "up", "gateway-idle": "down", "gateway-broken": "down"} {
		if state, _ := p.statusOf(name); state != want {
			t.Errorf("first boot: %s is %q, want %q", name, state, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(home, "profiles/coder/gateway.pid")); !os.IsNotExist(err) {
		t.Errorf("stale gateway.pid not removed: %v", err)
	}
	if code, _, e := p.hsvc(member, "stop", "gateway-coder", "--wait=10s"); code != 0 {
		t.Fatalf("hsvc stop as the hermes user: %d %s", code, e)
	}
	p.waitOutput("[gateway-coder] gateway stopped on request", false)
	coder := readJSON(t, filepath.Join(home, "profiles/coder/gateway_state.json"))
	if coder["desired_state"] != "stopped" || coder["gateway_state"] != "stopped" || coder["updated_at"] == nil {
		t.Errorf("after hsvc stop: %v", coder)
	}
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)
	p.waitOutput("[gateway-default] gateway interrupted", false)
	root := readJSON(t, filepath.Join(home, "gateway_state.json"))
	if root["gateway_state"] != "running" || root["desired_state"] != nil || fmt.Sprint(root["extra"]) != "map[keep:[1 2]]" {
		t.Errorf("container shutdown changed the root state: %v", root)
	}

	p = boot() // docker restart
	p.waitOutput("[gateway-default] gateway up", false)
	for name, want := range map[string]string{"gateway-default": "up", "gateway-coder": "down", "gateway-idle": "down"} {
		if state, _ := p.statusOf(name); state != want {
			t.Errorf("after restart: %s is %q, want %q", name, state, want)
		}
	}
	log, _ := os.ReadFile(filepath.Join(home, "logs/container-boot.log"))
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	var got []string
	for _, l := range lines {
		_, rest, _ := strings.Cut(l, " ")
		got = append(got, rest)
	}
	want := []string{
		"profile=default prior_state=running action=started prior_exit=unknown",
		"profile=broken prior_state=none action=registered prior_exit=unknown",
		"profile=coder prior_state=running action=started prior_exit=unknown",
		"profile=idle prior_state=stopped action=registered prior_exit=unknown",
		"profile=default prior_state=running action=started prior_exit=unknown",
		"profile=broken prior_state=none action=registered prior_exit=unknown",
		"profile=coder prior_state=stopped action=registered prior_exit=unknown",
		"profile=idle prior_state=stopped action=registered prior_exit=unknown",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("boot log:\n%s\nwant (after the timestamp):\n%s", log, strings.Join(want, "\n"))
	}
	if fi, err := os.Stat(filepath.Join(home, "logs/container-boot.log")); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 10000 {
		t.Errorf("boot log not owned by the hermes user: %v", err)
	}
}

// The container environment dir: written at boot with tight modes, changed
// by a boot hook (the boot's starts all see that), read afresh by every
// later start, and by with-contenv.
func TestEnvDirAndBootHooks(t *testing.T) {
	testprog.ExposeBinary(t)
	cfg := fmt.Sprintf(`user: "10000:10000"
boot:
  - name: greet
    command: [/bin/sh, -c, 'printf bonjour > "$HINIT_RUNTIME_DIR/env/GREETING"']
  - name: optional
    command: [/bin/sh, -c, 'exit 5']
    on_failure: continue
services:
  who: {command: %s, restart: never}
`, prog("whoami"))
	p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}, env: []string{"EMPTY=", "A=1"}})
	p.waitOutput("GREETING=bonjour", false)
	dir := filepath.Join(p.dir, "run", "env")
	checkMode(t, dir, 0o750|os.ModeDir, 0, 10000)
	checkMode(t, filepath.Join(dir, "A"), 0o640, 0, 10000)
	if b, err := os.ReadFile(filepath.Join(dir, "EMPTY")); err != nil || len(b) != 0 {
		t.Errorf("empty variable not kept: %q %v", b, err)
	}
	if !strings.Contains(p.stderr.String(), `boot hook failed: going on (on_failure: continue) hook=optional err="exit status 5"`) {
		t.Errorf("no continue line:\n%s", p.stderr)
	}
	self := testprog.Command("x")[0]
	cmd := exec.Command(self, "with-contenv", "/bin/sh", "-c", "echo $GREETING")
	cmd.Env = []string{"HINIT_TEST_AS_INIT=1", "HINIT_RUNTIME_DIR=" + filepath.Join(p.dir, "run")}
	if out, err := cmd.Output(); err != nil || string(out) != "bonjour\n" {
		t.Errorf("with-contenv: %q %v", out, err)
	}
	p.waitOutput("exited svc=who", true) // a start while it still runs would change nothing
	if err := os.WriteFile(filepath.Join(dir, "GREETING"), []byte("hola"), 0o640); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := p.hsvc(nil, "start", "who"); code != 0 {
		t.Fatalf("hsvc start who: %d %s %s", code, out, errOut)
	}
	p.waitOutput("GREETING=hola", false)
	p.signal(syscall.SIGTERM)
	p.wait(10 * time.Second)
}

// A runtime dir too full for the environment dir (docker run --tmpfs
// /run:size=8k) leaves no env dir, never a part of one: with-contenv, as a
// run script or a docker exec calls it, then runs with the environment it
// was given, which is the container's. It used to find the variables
// written before the failure, and ran without the API key, exit 0.
func TestEnvDirFullRuntimeDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	run := testprog.PublicDir(t)
	if err := unix.Mount("tmpfs", run, "tmpfs", 0, "size=8k,mode=755"); err != nil {
		t.Skipf("cannot mount a tiny tmpfs to fill up: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(run, unix.MNT_DETACH) })
	testprog.ExposeBinary(t)
	script := `unset HINIT_TESTPROG; HINIT_TEST_AS_INIT=1 "$SELF" with-contenv /bin/sh -c 'echo "KEY=$ZZ_API_KEY"'; echo "rc=$?"`
	env := []string{"HINIT_RUNTIME_DIR=" + run, "SELF=" + testprog.Command("x")[0], "ZZ_API_KEY=sk-test"}
	for i := range 8 { // a page each: more than the tmpfs holds
		env = append(env, fmt.Sprintf("A_VAR%d=%d", i, i))
	}
	p, code := runInit(t, initOpts{args: []string{"/bin/sh", "-c", script}, env: env})
	if code != 0 || p.stdout.String() != "KEY=sk-test\nrc=0\n" {
		t.Errorf("exit %d, stdout %q; want 0 and %q", code, p.stdout, "KEY=sk-test\nrc=0\n")
	}
	if !strings.Contains(p.stderr.String(), "no space left on device; services get hinit's own environment") {
		t.Errorf("no environment dir error:\n%s", p.stderr)
	}
	ents, _ := os.ReadDir(run)
	for _, e := range ents {
		if e.IsDir() {
			t.Errorf("runtime dir holds %s/: want no env dir and nothing left of one", e.Name())
		}
	}
}

func TestBootHookStopsTheContainer(t *testing.T) {
	cfg := "boot:\n  - {name: setup, command: [/bin/sh, -c, 'exit 7']}\n  - {name: never, command: [/bin/sh, -c, 'echo ran-after']}\n"
	p, code := runInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}})
	if code != 7 || strings.Contains(p.stdout.String(), "ran-after") {
		t.Errorf("failed boot hook: exit %d, stdout %q; want 7 and nothing after it", code, p.stdout)
	}
	cfg = "boot:\n  - {name: slow, command: [sleep, '60'], timeout: 200ms}\n"
	if _, code := runInit(t, initOpts{config: cfg, args: []string{"true"}}); code != 124 {
		t.Errorf("timed-out boot hook: exit %d, want 124", code)
	}
}

// A boot hook runs as root: its command is looked up, and it runs with a
// PATH, of the dirs only root can change. With the hermes image's PATH a
// program the hermes user put in /opt/data/.local/bin, ahead of /usr/bin,
// ran as root at the next boot.
func TestBootHookRootsPATH(t *testing.T) {
	userBin, rootBin := testprog.PathDirs(t, map[string]string{"user/setup": "planted", "root/setup": "root's"})
	cfg := "boot:\n  - {name: setup, command: [setup]}\n"
	p, code := runInit(t, initOpts{config: cfg, args: []string{"/bin/true"}, env: []string{"PATH=" + userBin + ":" + rootBin + ":/usr/bin:/bin"}})
	want := "root's PATH=" + rootBin + ":/usr/bin:/bin\n"
	if code != 0 || !strings.Contains(p.stdout.String(), want) || strings.Contains(p.stdout.String(), "planted") {
		t.Errorf("exit %d, stdout %q; want 0 and %q", code, p.stdout, want)
	}
	// Root's with-contenv too (#!/command/with-contenv bash in a root
	// service): the environment dir holds the container's whole PATH.
	run := t.TempDir()
	if err := os.MkdirAll(filepath.Join(run, "env"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "env", "PATH"), []byte(userBin+":"+rootBin+":/usr/bin:/bin"), 0o640); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testprog.Command("x")[0], "with-contenv", "setup")
	cmd.Env = []string{"HINIT_TEST_AS_INIT=1", "HINIT_RUNTIME_DIR=" + run}
	if out, err := cmd.Output(); err != nil || string(out) != want {
		t.Errorf("root's with-contenv setup: %q %v, want %q", out, err, want)
	}
}

func checkMode(t *testing.T, path string, mode os.FileMode, uid, gid uint32) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode() != mode || st.Uid != uid || st.Gid != gid {
		t.Errorf("%s: %v %d:%d, want %v %d:%d", path, fi.Mode(), st.Uid, st.Gid, mode, uid, gid)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// docker stop during a long boot hook stops the hook and the container at
// once with 128+15, instead of waiting for the hook's timeout.
func TestStopDuringBootHook(t *testing.T) {
	cfg := "boot:\n  - {name: slow, command: [/bin/sh, -c, 'echo hook-running; exec sleep 60'], timeout: 60s}\n"
	p := startInit(t, initOpts{config: cfg, args: []string{"/bin/echo", "main-ran"}})
	p.waitOutput("hook-running", false)
	start := time.Now()
	p.signal(syscall.SIGTERM)
	if code := p.wait(10 * time.Second); code != 143 {
		t.Errorf("TERM during a boot hook: exit %d, want 143", code)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("TERM during a boot hook took %v", took)
	}
	if strings.Contains(p.stdout.String(), "main-ran") {
		t.Error("main ran after the boot was interrupted")
	}
}

// hermes gateway start for a profile without a slot (unregistered, or
// made on the host) is hsvc register gateway P: a start, recorded as
// desired_state running like hsvc start, so that the gateway comes back
// after a restart. Before, desired_state stayed "stopped" from the
// unregister and the next boot kept the gateway down.
func TestRegisterUpIsRemembered(t *testing.T) {
	testprog.ExposeBinary(t)
	home := writeHome(t)
	boot := gatewayBoot(t, home)
	desired := func() string {
		var st struct {
			Desired string `json:"desired_state"`
		}
		b, _ := os.ReadFile(filepath.Join(home, "profiles/coder/gateway_state.json"))
		json.Unmarshal(b, &st)
		return st.Desired
	}
	p := boot()
	p.waitOutput("[gateway-coder] gateway up", false)
	if code, _, e := p.hsvc(member, "unregister", "gateway-coder", "--wait=10s"); code != 0 {
		t.Fatalf("unregister: %d %s", code, e)
	}
	if d := desired(); d != "stopped" {
		t.Fatalf("desired_state after unregister: %q, want stopped", d)
	}
	if code, _, e := p.hsvc(member, "register", "gateway", "coder"); code != 0 {
		t.Fatalf("register: %d %s", code, e)
	}
	if d := desired(); d != "running" {
		t.Errorf("desired_state after register: %q, want running", d)
	}
	testprog.WaitFor(t, 10*time.Second, "gateway-coder up", func() bool { st, _ := p.statusOf("gateway-coder"); return st == "up" })
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)

	p = boot()
	testprog.WaitFor(t, 10*time.Second, "gateway-coder up after the restart", func() bool { st, _ := p.statusOf("gateway-coder"); return st == "up" })
}

// A stop hinit cannot apply (a container without CAP_KILL: hinit answers
// exit 1 and the gateway runs on) leaves desired_state running, or the
// next container start would keep down a gateway that was running when
// the container stopped; also after s6-svc -O (a one-run state, wanted
// down, which records nothing), and for a restart.
func TestFailedStopKeepsDesired(t *testing.T) {
	for _, tc := range []struct {
		name string
		once bool
		verb string
	}{{"stop", false, "stop"}, {"once then stop", true, "stop"}, {"once then restart", true, "restart"}} {
		t.Run(tc.name, func(t *testing.T) {
			testprog.ExposeBinary(t)
			home := writeHome(t)
			cfg := fmt.Sprintf(gatewayConfig, prog("gateway", "${HERMES_HOME}/profiles/{instance}"), prog("gateway", "${HERMES_HOME}"))
			p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}, env: []string{"HERMES_HOME=" + home}, dropCaps: "-kill"})
			p.waitOutput("main started", true)
			p.waitOutput("[gateway-coder] gateway up", false)
			if tc.once { // s6-svc -O
				c, err := control.Dial(filepath.Join(p.dir, "run", control.SocketName))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if resp, err := c.Do(ctx, &control.Request{Verb: control.VerbOnce, Names: []string{"gateway-coder"}}); err != nil || !resp.OK {
					t.Fatalf("once: %v %+v", err, resp)
				}
			}
			code, _, errOut := p.hsvc(member, tc.verb, "gateway-coder")
			if code != 1 || !strings.Contains(errOut, "CAP_KILL") {
				t.Errorf("hsvc %s without CAP_KILL: exit %d %q, want 1 and why", tc.verb, code, errOut)
			}
			if state, _ := p.statusOf("gateway-coder"); state != "up" {
				t.Errorf("after the failed %s gateway-coder is %q, want up", tc.verb, state)
			}
			if d := readJSON(t, filepath.Join(home, "profiles/coder/gateway_state.json"))["desired_state"]; d != "running" {
				t.Errorf("the failed %s left desired_state %v; the gateway still runs", tc.verb, d)
			}
		})
	}
}

// A SIGINT hinit inherited ignored shuts nothing down (setupSignals), during
// a boot hook too: the hook runs to its end (here its timeout, on_failure:
// continue) and main runs. Before, it stopped the boot with 130.
func TestInheritedIgnoredDuringBootHook(t *testing.T) {
	self := testprog.Command("x")[0]
	cfg := "boot:\n  - {name: slow, command: [/bin/sh, -c, 'echo hook-running; exec sleep 60'], timeout: 1s, on_failure: continue}\n"
	p := startInit(t, initOpts{config: cfg, args: []string{"/bin/echo", "main-ran"},
		wrap: []string{"/usr/bin/env", "HINIT_TEST_SIGCONF=1", self}}) // SIGINT ignored when hinit starts
	p.waitOutput("hook-running", false)
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGINT)
	if code := p.wait(10 * time.Second); code != 0 {
		t.Errorf("inherited ignored SIGINT during a boot hook: exit %d, want main's 0", code)
	}
	if !strings.Contains(p.stdout.String(), "main-ran") {
		t.Error("main did not run")
	}
}

// -p SIG during a boot hook: hinit's parent died, so the boot stops as at
// docker stop's TERM, with 128+SIG (as PID 1 every receipt counts).
// Before, the hook took the signal for one it could ignore and the boot went
// on: the parent-death signal comes once, and the container ran on without
// its parent.
func TestParentDeathDuringBootHook(t *testing.T) {
	cfg := "boot:\n  - {name: slow, command: [/bin/sh, -c, 'echo hook-running; exec sleep 60'], timeout: 60s}\n"
	p := startInit(t, initOpts{config: cfg, flags: []string{"-p", "SIGUSR1"}, args: []string{"/bin/echo", "main-ran"}})
	p.waitOutput("hook-running", false)
	p.signal(syscall.SIGUSR1)
	if code := p.wait(10 * time.Second); code != 128+int(syscall.SIGUSR1) {
		t.Errorf("-p SIGUSR1 during a boot hook: exit %d, want %d", code, 128+int(syscall.SIGUSR1))
	}
	if strings.Contains(p.stdout.String(), "main-ran") {
		t.Error("main ran after hinit's parent died")
	}
	if want := "boot interrupted: stopping the container hook=slow err=\"interrupted: hinit's parent died (SIGUSR1)\""; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, p.stderr)
	}
}

// While a boot hook runs (for minutes on a big volume), hsvc is answered
// at once: "hinit is booting", exit 1; before, the socket took the
// connection and said nothing, and hsvc check gave up after 10 s with
// "it may be stuck" (exit 6), racing the HEALTHCHECK's own 10 s timeout.
// Once the boot is done the manager answers.
func TestHsvcWhileBooting(t *testing.T) {
	gofile := filepath.Join(t.TempDir(), "go")
	cfg := "boot:\n  - {name: slow, command: [/bin/sh, -c, 'echo hook-waiting; while [ ! -e \"$GOFILE\" ]; do sleep 0.02; done']}\n"
	p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}, env: []string{"GOFILE=" + gofile}})
	testprog.WaitFor(t, 15*time.Second, "the hook to run", func() bool {
		return strings.Contains(p.stdout.String()+p.stderr.String(), "hook-waiting")
	})
	start := time.Now()
	code, _, errOut := p.hsvc(nil, "check")
	if took := time.Since(start); code != 1 || !strings.Contains(errOut, "hinit is booting (for ") || took > 5*time.Second {
		t.Errorf("hsvc check while booting: exit %d in %v, %q; want 1 at once, booting", code, took, errOut)
	}
	if err := os.WriteFile(gofile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.waitOutput("main started", true)
	if code, _, errOut := p.hsvc(nil, "check"); code != 0 {
		t.Errorf("hsvc check once booted: exit %d, %q", code, errOut)
	}
	p.signal(syscall.SIGTERM)
	p.wait(10 * time.Second)
}
