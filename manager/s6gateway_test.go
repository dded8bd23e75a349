package manager_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/control"
	"hinit/internal/testprog"
	mt "hinit/manager/managertest"
	"hinit/reconcile"
)

// s6GatewayHermes is an s6 dir gateway-coder as today's hermes renders it
// (S6ServiceManager.register_profile_gateway): its finish script turns a
// clean exit into 125 (stay down), and the "gateway" exits 0 on a SIGTERM
// with its planned-stop marker, 1 without (gateway/run.py).
func s6GatewayHermes(t *testing.T) (*mt.Fixture, string) {
	t.Helper()
	f := mt.Start(t, "compat: s6-overlay\nreconcile: {home: \"${HERMES_HOME}\", template: gateway}\ntemplates:\n  gateway:\n    command: "+
		mt.Prog("sleep", "inf")+"\n    stop: {planned_stop_marker: \"${HERMES_HOME}/profiles/{instance}/.gateway-planned-stop.json\"}\n    "+mt.Env, nil)
	dir := filepath.Join(f.Home, "profiles", "coder")
	marker := filepath.Join(dir, ".gateway-planned-stop.json")
	tmp := filepath.Join(f.Scandir, ".gateway-coder.tmp")
	files := map[string]string{
		filepath.Join(dir, "SOUL.md"):            "soul\n",
		filepath.Join(dir, "gateway_state.json"): `{"gateway_state":"running","desired_state":"running"}`,
		filepath.Join(tmp, "type"):               "longrun\n",
		// ready (notification-fd) once its trap is set: a TERM before
		// would end it with 143, neither 0 nor 1
		filepath.Join(tmp, "notification-fd"): "3\n",
		filepath.Join(tmp, "run"): "#!/bin/sh\ntrap 'if [ -e " + marker + " ]; then rm -f " + marker + "; exit 0; fi; exit 1' TERM\n" +
			"echo >&3; exec 3>&-\nwhile :; do sleep 1 & wait $!; done\n",
		filepath.Join(tmp, "finish"): "#!/bin/sh\nif [ \"$1\" = \"78\" ]; then exit 125; fi\nif [ \"$1\" = \"0\" ]; then exit 125; fi\nexit 0\n",
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if b := filepath.Base(p); b == "run" || b == "finish" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(tmp, filepath.Join(f.Scandir, "gateway-coder")); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 5*time.Second, "gateway-coder up and ready", func() bool {
		st := f.Status("gateway-coder")
		return st != nil && st.State == "up" && st.Ready
	})
	return f, dir
}

// hsvc restart of a gateway hermes registered as an s6 dir: the restart
// wrote the planned-stop marker, the gateway exited 0, hermes' finish
// script turned that into 125 (stay down), and the gateway the user
// restarted stayed down (exited, want down). A restart of a service with a
// finish program is now what s6-svc -t is: a plain stop signal.
func TestRestartOfHermesS6Gateway(t *testing.T) {
	f, dir := s6GatewayHermes(t)
	pid := f.Status("gateway-coder").PID
	resp := f.Do(control.Request{Verb: control.VerbRestart, Names: []string{"gateway-coder"}, Wait: "10s"})
	st := f.Status("gateway-coder")
	if resp.Code != 0 || st.State != "up" || st.PID == pid {
		t.Errorf("hsvc restart answered %d %q; the gateway is %s, want %s, pid %d (was %d), reason %q",
			resp.Code, resp.Error, st.State, st.Want, st.PID, pid, st.Reason)
	}
	if d := desiredState(filepath.Join(dir, "gateway_state.json")); d != "running" {
		t.Errorf("desired_state %q after a restart, want running", d)
	}
}

// hermes' S6ServiceManager (the shipped image's compat: s6-overlay) writes
// desired_state itself after each s6-svc: `hermes gateway restart` is
// s6-svc -t, then desired_state "running". hinit's record of its own last
// write (the stop: stopped, replaced running) took hermes' deliberate
// "running" for the gateway's revert: the next boot kept the gateway down,
// where the s6 image's boot starts it. hermes' writer stamps updated_at as
// an epoch number, the gateway's rewrite and hinit an ISO string.
func TestHermesDesiredStateAfterItsOwnStop(t *testing.T) {
	f, dir := s6GatewayHermes(t)
	state := filepath.Join(dir, "gateway_state.json")
	// hermes gateway stop: s6-svc -d (hinit records stopped), then hermes' own write.
	f.Expect(control.Request{Verb: control.VerbStop, Names: []string{"gateway-coder"}, Wait: "10s"}, 0, "")
	hermesWriteDesired(t, state, "stopped")
	// hermes gateway restart: s6-svc -t (a signal: nothing runs, nothing recorded), then hermes' write.
	hermesWriteDesired(t, state, "running")
	b, _ := os.ReadFile(state)
	t.Logf("gateway_state.json before the reboot: %s", b)

	acts, err := reconcile.Run(reconcile.Options{Home: f.Home, Scandir: t.TempDir(), Template: "gateway"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acts {
		if a.Profile == "coder" {
			b, _ := os.ReadFile(state)
			t.Logf("boot: prior_state=%s start=%v; file now %s", a.Prior, a.Start, b)
			if !a.Start {
				t.Errorf("hermes recorded desired_state running (as the s6 image's boot would start it), the boot registered gateway-coder down")
			}
		}
	}
}

// hermesWriteDesired is S6ServiceManager._write_gateway_desired_state:
// read, set desired_state and updated_at (int epoch), .tmp + replace.
func hermesWriteDesired(t *testing.T, path, desired string) {
	t.Helper()
	var doc map[string]any
	b, _ := os.ReadFile(path)
	json.Unmarshal(b, &doc)
	if doc == nil {
		doc = map[string]any{}
	}
	doc["desired_state"] = desired
	doc["updated_at"] = time.Now().Unix()
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(path+".tmp", out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// A gateway's s6 dir replaced by another under its name (renamed over it,
// or removed and made again in one batch) is a new service; the old one
// is stopped, but nobody asked for that stop: it gets no planned-stop
// marker, which would have it record "stopped" for a profile whose new
// gateway runs. (The fixture's gateway exits 0 on TERM with the marker, 1
// without.)
func TestS6GatewayReplacedGetsNoPlannedStop(t *testing.T) {
	f, _ := s6GatewayHermes(t)
	old := f.Status("gateway-coder").PID
	tmp := filepath.Join(f.Scandir, ".gateway-coder.new")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "run"), []byte("#!/bin/sh\nexec sleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, filepath.Join(f.Scandir, "gateway-coder"), unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("SKIPPED LOUDLY: RENAME_EXCHANGE: %v", err)
	}
	if err := os.RemoveAll(tmp); err != nil { // the old dir
		t.Fatal(err)
	}
	exited := fmt.Sprintf("msg=exited svc=gateway-coder pid=%d ", old)
	testprog.WaitFor(t, 10*time.Second, "the old gateway's exit", func() bool { return strings.Contains(f.Logged.String(), exited) })
	if want := exited + "code=1\n"; !strings.Contains(f.Logged.String(), want) {
		t.Errorf("the replaced gateway's exit: want %q (no planned-stop marker), log:\n%s", want, f.Logged.String())
	}
}
