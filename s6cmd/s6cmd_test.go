package s6cmd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
)

func TestGetopt(t *testing.T) {
	opts, rest, ok := getopt([]string{"-wU", "-T", "300", "-ud", "/run/service/x"}, "ud", "wT")
	if !ok || len(rest) != 1 || rest[0] != "/run/service/x" {
		t.Fatalf("getopt: %v %v %v", opts, rest, ok)
	}
	var got []string
	for _, o := range opts {
		got = append(got, string(o.c)+o.val)
	}
	if strings.Join(got, ",") != "wU,T300,u,d" {
		t.Errorf("options %v, want wU,T300,u,d", got)
	}
	if _, _, ok := getopt([]string{"-z", "x"}, "ud", "wT"); ok {
		t.Error("an unknown option was accepted")
	}
	if _, _, ok := getopt([]string{"-T"}, "ud", "wT"); ok {
		t.Error("-T without its value was accepted")
	}
}

// The s6-svstat line for each state hinit has, as s6 2.11 prints it.
func TestSvstatLine(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 45, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(-time.Duration(s) * time.Second) }
	normal, down := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(down, "down"), nil, 0o644)
	os.WriteFile(filepath.Join(down, "notification-fd"), []byte("3\n"), 0o644)
	os.WriteFile(filepath.Join(normal, "notification-fd"), []byte("3\n"), 0o644)
	for _, tt := range []struct {
		dir  string
		st   control.Status
		want string
	}{
		{normal, control.Status{State: "up", Want: "up", PID: 123, UpSince: at(45), Since: at(44), Ready: true},
			"up (pid 123) 45 seconds, ready 44 seconds"},
		{normal, control.Status{State: "starting", Want: "up", PID: 123, UpSince: at(2), Since: at(2)},
			"up (pid 123) 2 seconds"},
		{down, control.Status{State: "up", Want: "down", PID: 9, UpSince: at(5), Since: at(5), Ready: true},
			"up (pid 9) 5 seconds, normally down, want down, ready 5 seconds"},
		{down, control.Status{State: "down", Want: "down", Since: at(3)},
			"down (exitcode 0) 3 seconds, ready 3 seconds"},
		{normal, control.Status{State: "backoff", Want: "up", Since: at(1),
			LastExit: &control.Exit{Code: 137, Signal: "KILL", At: at(1)}},
			"down (signal SIGKILL) 1 seconds, normally up, want up, ready 1 seconds"},
		{normal, control.Status{State: "exited", Want: "down", Since: at(7),
			LastExit: &control.Exit{Code: 78, At: at(8)}},
			"down (exitcode 78) 8 seconds, normally up, ready 7 seconds"},
		{normal, control.Status{State: "stopping", Want: "up", Since: at(0),
			LastExit: &control.Exit{Code: 1, At: at(0)}},
			"down (exitcode 1) 0 seconds, normally up, want up"},
	} {
		if got := view(&tt.st, tt.dir, now).line(false); got != tt.want {
			t.Errorf("%s %+v:\n got %s\nwant %s", tt.dir, tt.st, got, tt.want)
		}
	}
}

// s6-svstat's ready and s6-svwait -U's "never ready" are one rule: an up
// service hinit sees ready is ready but in an s6 dir without
// notification-fd; a service.yaml dir and a static service (no dir) are
// ready by their ready: key. svstat said false for both before, while
// s6-svwait -U returned 0.
func TestSvstatReadyIsSvwaitsReady(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 45, 0, time.UTC)
	s6, s6fd, yaml := t.TempDir(), t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(s6, "run"), filepath.Join(s6fd, "run"), filepath.Join(s6fd, "notification-fd"),
		filepath.Join(yaml, "service.yaml"), filepath.Join(yaml, "run")} {
		if err := os.WriteFile(f, []byte("3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := control.Status{State: "up", Want: "up", PID: 9, UpSince: now, Since: now, Ready: true}
	for dir, want := range map[string]bool{s6: false, s6fd: true, yaml: true, filepath.Join(yaml, "static"): true} {
		if got := view(&st, dir, now).ready; got != want || neverReady(dir, control.UntilReady) == want {
			t.Errorf("%s: svstat ready %v, never ready for svwait %v; want ready %v for both", dir, got, neverReady(dir, control.UntilReady), want)
		}
	}
}

func TestSvstatFields(t *testing.T) {
	now := time.Unix(1795457989, 5)
	st := control.Status{State: "exited", Want: "down", Since: now,
		LastExit: &control.Exit{Code: 143, Signal: "TERM", At: now}}
	v := view(&st, t.TempDir(), now)
	var got []string
	for _, f := range []string{"up", "wantedup", "normallyup", "ready", "pid", "exitcode", "signal", "signum", "updownsince"} {
		got = append(got, svstatFields[f](v))
	}
	if want := "false false true false -1 -1 SIGTERM 15 @400000006b0483ea00000005"; strings.Join(got, " ") != want {
		t.Errorf("fields %q, want %q", strings.Join(got, " "), want)
	}
}

func TestParseLogScript(t *testing.T) {
	sc, err := parseLogScript([]string{"1", "n10", "s1000000", "T", "/opt/data/logs/gateways/coder"})
	if err != nil {
		t.Fatal(err)
	}
	if !sc.stdout || sc.keep != 10 || sc.maxSize != 1000000 || sc.dir != "/opt/data/logs/gateways/coder" {
		t.Errorf("hermes' script read as %+v", sc)
	}
	for _, bad := range [][]string{{"t", "/x"}, {"-.*", "/x"}, {"!gzip", "/x"}, {"/x", "/y"}, {"n3"}} {
		if _, err := parseLogScript(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestRestartSendsTheStopSignal: s6-svc -r sends the stop signal of the
// definition running, as a stop does: an s6 dir's down-signal, a
// service.yaml's stop.signal; and the service comes back at once. Before,
// s6-svc read the dir itself and sent TERM to every service.yaml dir (no
// run file to read) and to the static services (no dir).
func TestRestartSendsTheStopSignal(t *testing.T) {
	bin := buildCommands(t)
	work := t.TempDir()
	scan, env := startHinit(t, bin, work, "compat: s6-overlay\n")
	run := func(args ...string) (string, error) {
		c := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
		c.Env = env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	testprog.WaitFor(t, 10*time.Second, "hinit to answer", func() bool { _, err := run("hsvc", "status"); return err == nil })
	// Each says which signal ended it, then exits 0; out.trapped once its
	// traps are set (up is only spawned).
	script := func(out string) string {
		return `for s in TERM INT HUP; do trap "echo $s >>` + out + `; exit 0" $s; done; : >` + out + `.trapped; sleep 1000 & wait`
	}
	for name, files := range map[string]map[string]string{
		"yml": {"service.yaml": "command: [/bin/sh, -c, '" + script(filepath.Join(work, "yml.out")) + "']\nstop: {signal: INT}\n"},
		"s6":  {"run": "#!/bin/sh\n" + script(filepath.Join(work, "s6.out")) + "\n", "down-signal": "SIGHUP\n"},
	} {
		tmp := filepath.Join(scan, "."+name)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, content := range files {
			if err := os.WriteFile(filepath.Join(tmp, f), []byte(content), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(tmp, filepath.Join(scan, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"yml": "INT\n", "s6": "HUP\n"} {
		// hsvc wait does not wait for a name the watcher has not read yet.
		testprog.WaitFor(t, 10*time.Second, name+" picked up", func() bool { _, err := run("hsvc", "status", name); return err == nil })
		if out, err := run("hsvc", "wait", name, "--up", "--timeout", "10s"); err != nil {
			t.Fatalf("%s never up: %v %s", name, err, out)
		}
		outFile := filepath.Join(work, name+".out")
		testprog.WaitFor(t, 10*time.Second, name+"'s traps", func() bool { _, err := os.Stat(outFile + ".trapped"); return err == nil })
		st, _ := run("s6-svstat", "-o", "pid", filepath.Join(scan, name))
		if out, err := run("s6-svc", "-r", filepath.Join(scan, name)); err != nil {
			t.Fatalf("s6-svc -r %s: %v %s", name, err, out)
		}
		testprog.WaitFor(t, 10*time.Second, name+"'s signal", func() bool { b, _ := os.ReadFile(outFile); return len(b) > 0 })
		if b, _ := os.ReadFile(outFile); string(b) != want {
			t.Errorf("s6-svc -r %s sent %q, want %q", name, b, want)
		}
		testprog.WaitFor(t, 10*time.Second, name+" up again in another process", func() bool {
			now, err := run("s6-svstat", "-o", "pid", filepath.Join(scan, name))
			return err == nil && now != st && strings.TrimSpace(now) != "-1"
		})
	}
}

// TestNeverReady: s6 marks a service ready only through its
// notification-fd, so s6-svwait's wait for ready on a dir without one ends
// only at its timeout (99), as with s6 (checked against s6 2.11.3: s6-svwait
// -U -t 500 on an up service without notification-fd exits 99). Before,
// hinit answered 0 once the service was up, while its own s6-svstat -o
// ready said false. s6-svc -wU falls back to -wu with a warning instead
// (TestDifferential).
func TestNeverReady(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\nexec sleep 1000\n"), 0o755); err != nil {
		t.Fatal(err) // an s6 dir
	}
	for _, tc := range []struct {
		prog string
		run  func(*env, []string) int
		args []string
		msg  string
	}{
		{"s6-svwait", runSvwait, []string{"-U", "-t", "100", dir}, "s6-svwait: fatal: timed out\n"},
		{"s6-svwait", runSvwait, []string{"-R", "-t", "100", dir}, "s6-svwait: fatal: timed out\n"},
	} {
		var out, errb strings.Builder
		e := &env{prog: tc.prog, ctx: context.Background(), stdout: &out, stderr: &errb,
			sock: filepath.Join(dir, "no.sock"), now: time.Now}
		if code := tc.run(e, tc.args); code != exitTimeout || errb.String() != tc.msg {
			t.Errorf("%s %q = %d, %q; want %d, %q", tc.prog, tc.args, code, errb.String(), exitTimeout, tc.msg)
		}
	}
}

// A static service of hinit.yaml with ready: is addressed as
// /run/service/NAME (s6-overlay's s6-rc longrun, which had a
// notification-fd), and a service.yaml dir may also hold a run file (the
// scandir reads service.yaml first): both are ready by their ready: key.
// s6-svc -wU -u waits for that, never answering while the service is
// still starting. The notification-fd fallback of an s6 dir answered 0 at
// once there.
func TestWaitReadyOfHinitsServices(t *testing.T) {
	bin := buildCommands(t)
	for _, static := range []bool{true, false} {
		t.Run(fmt.Sprintf("static=%v", static), func(t *testing.T) {
			work := t.TempDir()
			yaml := "compat: s6-overlay\n"
			if static {
				yaml += "services:\n  dashboard: {command: [sleep, \"1000\"], ready: {delay: 1s}}\n"
			}
			scan, env := startHinit(t, bin, work, yaml)
			run := func(args ...string) (string, error) {
				c := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
				c.Env = env
				out, err := c.CombinedOutput()
				return string(out), err
			}
			until := func(what string, args ...string) {
				deadline := time.Now().Add(5 * time.Second)
				for {
					out, err := run(args...)
					if err == nil {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: %v %s", what, err, out)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			svc := filepath.Join(scan, "dashboard")
			if !static {
				until("hinit up", "hsvc", "status")
				// the scandir is emptied at boot: the dir comes now, whole
				tmp := filepath.Join(scan, ".dashboard")
				for name, content := range map[string]string{"service.yaml": "command: [sleep, \"1000\"]\nready: {delay: 1s}\n",
					"run": "#!/bin/sh\nexec sleep 1000\n"} {
					if err := os.MkdirAll(tmp, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Rename(tmp, svc); err != nil {
					t.Fatal(err)
				}
			}
			until("dashboard down", "s6-svc", "-wD", "-T", "5000", "-d", svc)
			out, err := run("s6-svc", "-wU", "-T", "10000", "-u", svc)
			st, _ := run("hsvc", "status", "dashboard")
			lines := strings.Split(strings.TrimSpace(st), "\n")
			if last := lines[len(lines)-1]; err == nil && !strings.Contains(last, " up ") {
				t.Errorf("s6-svc -wU -u answered 0 (%q) while the service is not ready: %s", out, last)
			}
		})
	}
}

// TestSvscanctlScandir: s6-svscanctl controls the scandir hinit watches,
// by whatever path reaches it (a symlink, a relative one), and no other
// dir: there it fails as s6 2.11 does on a dir no s6-svscan scans (100,
// "supervisor not listening"), and -q shuts nothing down. The clients do
// not know HINIT_SCANDIR: hinit tells its scandir by device and inode.
// Before, any existing dir was taken: `s6-svscanctl -q /tmp` shut the
// container down.
func TestSvscanctlScandir(t *testing.T) {
	bin := buildCommands(t)
	work := t.TempDir()
	scan, rt := filepath.Join(work, "scan"), filepath.Join(work, "rt")
	plain, dot, link := filepath.Join(work, "plain"), filepath.Join(scan, ".x"), filepath.Join(work, "scanlink")
	cfg := filepath.Join(work, "hinit.yaml")
	if err := os.WriteFile(cfg, []byte("compat: s6-overlay\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{scan, plain} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("scan", link); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(work, "hinit.log")) // a file: Wait waits for no pipe a child holds
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	hinitLog := func() string { b, _ := os.ReadFile(logFile.Name()); return string(b) }
	sup := exec.Command(filepath.Join(bin, "hinit"), "sleep", "1000")
	sup.Env = append(os.Environ(), "HINIT_CONFIG="+cfg, "HINIT_RUNTIME_DIR="+rt, "HINIT_SCANDIR="+scan)
	sup.Stdout, sup.Stderr = logFile, logFile
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed once hinit has exited
	go func() { sup.Wait(); close(exited) }()
	defer stopHinit(sup, exited)
	var clientEnv []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HINIT_SCANDIR=") {
			clientEnv = append(clientEnv, kv)
		}
	}
	clientEnv = append(clientEnv, "HINIT_RUNTIME_DIR="+rt)
	run := func(dir string, args ...string) (int, string) {
		c := exec.Command(filepath.Join(bin, "s6-svscanctl"), args...)
		c.Env, c.Dir = clientEnv, dir
		var errb strings.Builder
		c.Stderr = &errb
		err := c.Run()
		if err != nil && c.ProcessState == nil {
			t.Fatal(err)
		}
		return c.ProcessState.ExitCode(), errb.String()
	}
	// hinit answers once its socket is there and its watcher has begun:
	// hsvc list polls until it answers.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := exec.Command(filepath.Join(bin, "hsvc"), "list")
		c.Env = clientEnv
		if c.Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hinit did not answer: %s", hinitLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.Mkdir(dot, 0o755); err != nil { // in the scandir, not it
		t.Fatal(err)
	}
	notListening := func(dir string) string {
		return "s6-svscanctl: fatal: unable to control " + dir + ": supervisor not listening\n"
	}
	for _, tc := range []struct {
		cwd  string
		args []string
		code int
		msg  string
	}{
		{"", []string{"-a", scan}, 0, ""},
		{"", []string{"-an", link}, 0, ""},
		{work, []string{"-a", "scan"}, 0, ""},
		{scan, []string{"-a", "."}, 0, ""},
		{"", []string{"-a", plain}, 100, notListening(plain)},
		{"", []string{"-q", plain}, 100, notListening(plain)},
		{"", []string{"-t", dot}, 100, notListening(dot)},
		{work, []string{"-b", "plain"}, 100, notListening("plain")},
		{"", []string{"-q", "/tmp"}, 100, notListening("/tmp")},
		{"", []string{"-q", filepath.Join(work, "missing")}, 111,
			"s6-svscanctl: fatal: unable to control " + filepath.Join(work, "missing") + ": No such file or directory\n"},
	} {
		if code, msg := run(tc.cwd, tc.args...); code != tc.code || msg != tc.msg {
			t.Errorf("s6-svscanctl %q in %q = %d, %q; want %d, %q", tc.args, tc.cwd, code, msg, tc.code, tc.msg)
		}
	}
	select {
	case <-exited:
		t.Fatalf("hinit exited (%v) after s6-svscanctl on other dirs:\n%s", sup.ProcessState, hinitLog())
	default:
	}
	if os.Geteuid() != 0 {
		t.Log("not root: s6-svscanctl -q on the scandir is not tried (only root may shut down)")
		return
	}
	if code, msg := run(work, "-q", "scanlink"); code != 0 || msg != "" {
		t.Fatalf("s6-svscanctl -q on the scandir = %d, %q; want 0, \"\"", code, msg)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("hinit did not shut down after s6-svscanctl -q on its scandir:\n%s", hinitLog())
	}
	if !strings.Contains(hinitLog(), "shutting down: requested") {
		t.Errorf("hinit's log says no requested shutdown:\n%s", hinitLog())
	}
}

// hermes' gateway start and stop are s6-svc -u and -d, with check=True:
// real s6 records nothing and exits 0, and hermes then writes
// desired_state itself (its writer takes a damaged gateway_state.json for
// {} and mends it). hinit records desired_state; when it cannot (a
// damaged file, a full or read-only volume), s6-svc said 111 and hermes
// reported the start failed and wrote nothing, at every start. Now s6-svc
// warns and exits 0; hsvc still fails (1), as the next boot would undo
// the request.
func TestSvcUnrecordedDesiredState(t *testing.T) {
	bin := buildCommands(t)
	work := t.TempDir()
	os.Chmod(work, 0o755)
	if err := os.MkdirAll(filepath.Join(work, "home", "profiles", "coder"), 0o755); err != nil {
		t.Fatal(err)
	}
	scan, env := startHinit(t, bin, work, "compat: s6-overlay\ntemplates:\n  gateway: {command: [sleep, \"1000\"]}\nreconcile: {home: "+
		filepath.Join(work, "home")+", template: gateway}\n")
	run := func(args ...string) (int, string, string) {
		c := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
		c.Env = env
		var out, errb strings.Builder
		c.Stdout, c.Stderr = &out, &errb
		c.Run()
		return c.ProcessState.ExitCode(), out.String(), errb.String()
	}
	testprog.WaitFor(t, 10*time.Second, "hinit answering", func() bool { code, _, _ := run("hsvc", "list"); return code == 0 })
	// A dir as hermes' register_profile_gateway makes it: dot-named, then renamed.
	tmp := filepath.Join(scan, ".gateway-coder.tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"type": "longrun\n", "run": "#!/bin/sh\nexec sleep 1000\n", "down": ""} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	svc := filepath.Join(scan, "gateway-coder")
	if err := os.Rename(tmp, svc); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run("s6-svscanctl", "-a", scan); code != 0 {
		t.Fatalf("s6-svscanctl -a: %d %s%s", code, out, errs)
	}
	state := filepath.Join(work, "home", "profiles", "coder", "gateway_state.json")
	if err := os.WriteFile(state, []byte(`{"gateway_state": "running"`), 0o644); err != nil { // cut short
		t.Fatal(err)
	}
	code, _, errs := run("s6-svc", "-u", svc)
	if code != 0 || !strings.Contains(errs, "s6-svc: warning: "+svc+": start done, but gateway-coder: desired_state running not recorded") {
		t.Errorf("s6-svc -u: exit %d, stderr %q; want 0 and a warning", code, errs)
	}
	if code, out, errs := run("s6-svwait", "-u", "-t", "5000", svc); code != 0 {
		t.Errorf("the gateway did not start: %d %s%s", code, out, errs)
	}
	if code, _, errs := run("hsvc", "stop", "gateway-coder"); code != 1 || !strings.Contains(errs, "desired_state stopped not recorded") {
		t.Errorf("hsvc stop: exit %d, stderr %q; want 1, not recorded", code, errs)
	}
	if code, _, errs := run("s6-svc", "-d", svc); code != 0 || !strings.Contains(errs, "s6-svc: warning:") {
		t.Errorf("s6-svc -d: exit %d, stderr %q; want 0 and a warning", code, errs)
	}
}

// startHinit runs hinit (of bin) on yaml as hinit.yaml, its runtime dir
// and scandir in work, until the test ends, and returns the scandir and
// the environment its clients need.
func startHinit(t *testing.T, bin, work, yaml string) (scan string, env []string) {
	t.Helper()
	scan = filepath.Join(work, "scan")
	cfg := filepath.Join(work, "hinit.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HINIT_CONFIG="+cfg,
		"HINIT_RUNTIME_DIR="+filepath.Join(work, "rt"), "HINIT_SCANDIR="+scan)
	sup := exec.Command(filepath.Join(bin, "hinit"), "sleep", "1000")
	sup.Env = env
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { sup.Wait(); close(exited) }()
	t.Cleanup(func() { stopHinit(sup, exited) })
	return scan, env
}

// stopHinit ends a test's hinit as docker stop would, so that it stops its
// main and services first: a SIGKILL left them running, orphans of the
// machine's init (five `sleep 1000` after each run). SIGKILL after 10 s.
func stopHinit(sup *exec.Cmd, exited <-chan struct{}) {
	sup.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		sup.Process.Kill()
		<-exited
	}
}
