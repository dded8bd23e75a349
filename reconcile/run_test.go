package reconcile

import (
	"hinit/gwstate"

	"hinit/svcname"

	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	w := newWorld(t)
	writeFile(t, filepath.Join(w.home, gwstate.StateFileName), `{"gateway_state":"running","pid":9}`)
	writeFile(t, filepath.Join(w.home, "gateway.pid"), `{"pid":9}`)
	writeFile(t, filepath.Join(w.home, "processes.json"), `[]`)
	coder := w.profile(t, "coder", `{"gateway_state":"running"}`)
	writeFile(t, filepath.Join(coder, "gateway.pid"), "42")
	writer := w.profile(t, "writer", `{"gateway_state":"running","desired_state":"stopped"}`)
	drain := w.profile(t, "drain", `{"gateway_state":"draining"}`)
	failed := w.profile(t, "failed", `{"gateway_state":"startup_failed"}`)
	// hermes' lifecycle sentinel: killed, exited cleanly, planted as a
	// link to a clean one (not followed), corrupt; the others have none.
	for _, dir := range []string{coder, writer, drain, failed} {
		mkdir(t, filepath.Join(dir, "state"))
	}
	writeFile(t, filepath.Join(coder, gwstate.LifecycleFile), `{"phase": "running", "pid": 7}`)
	writeFile(t, filepath.Join(writer, gwstate.LifecycleFile), "\ufeff"+`{"phase":"exited","exit_code":0}`)
	symlink(t, filepath.Join(writer, gwstate.LifecycleFile), filepath.Join(drain, gwstate.LifecycleFile))
	writeFile(t, filepath.Join(failed, gwstate.LifecycleFile), `{"phase":`)
	w.profile(t, "fresh", "")
	// desired_state as it stands, as hermes reads it: only running starts.
	w.profile(t, "emptywish", `{"desired_state":"","gateway_state":"running"}`)
	w.profile(t, "drainwish", `{"desired_state":"draining","gateway_state":"running"}`)
	broken := w.profile(t, "broken", `{"gateway_state":`)
	w.profile(t, "default", `{"gateway_state":"running"}`)
	w.profile(t, "Bad.Name", `{"gateway_state":"running"}`)
	w.profile(t, strings.Repeat("x", svcname.MaxProfileLen+1), `{"gateway_state":"running"}`)
	longest := strings.Repeat("y", svcname.MaxProfileLen) // as long as hermes allows
	w.profile(t, longest, `{"gateway_state":"running"}`)
	mkdir(t, filepath.Join(w.home, "profiles", "nosoul"))
	writeFile(t, filepath.Join(w.home, "profiles", "file"), "")
	// Symlinked profile dirs, which the s6 image followed: not followed,
	// and the boot log says so of a name that could be a profile's.
	symlink(t, coder, filepath.Join(w.home, "profiles", "bot"))
	symlink(t, coder, filepath.Join(w.home, "profiles", "Bad.Link"))
	// Links the s6 image took for no profile either: no line.
	symlink(t, "/nonexistent", filepath.Join(w.home, "profiles", "notes"))
	symlink(t, "/etc/hostname", filepath.Join(w.home, "profiles", "readme"))
	symlink(t, w.outside, filepath.Join(w.home, "profiles", "plainlink"))

	actions, err := w.run(t, false, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		profile string
		prior   string
		start   bool
		warning string // substring; "" = no warning
		exit    string // prior_exit
	}{
		{"default", "running", true, "", "unknown"},
		{"broken", "none", false, broken + "/gateway_state.json: corrupt state file", "unknown"},
		{"coder", "running", true, "", "unclean"},
		{"drain", "running", true, "", "unknown"},
		{"drainwish", "draining", false, "", "unknown"},
		{"emptywish", "", false, "", "unknown"},
		{"failed", "startup_failed", false, "", "unknown"},
		{"fresh", "none", false, "", "unknown"}, // never started: down without a warning
		{"writer", "stopped", false, "", "clean"},
		{longest, "running", true, "", "unknown"},
	}
	if len(actions) != len(tests) {
		t.Fatalf("got %d actions %+v, want %d", len(actions), actions, len(tests))
	}
	var wantLog strings.Builder
	for i, tc := range tests {
		a := actions[i]
		if a.Profile != tc.profile || a.Prior != tc.prior || a.Start != tc.start || a.PriorExit != tc.exit ||
			(tc.warning == "") != (a.Warning == "") || !strings.Contains(a.Warning, tc.warning) {
			t.Errorf("action %d = %+v, want %+v", i, a, tc)
		}
		yaml, down := w.slot(t, "gateway-"+tc.profile)
		if want := "template: gateway\ninstance: " + tc.profile + "\nstop_timeout: 1m10s\n"; yaml != want || down == tc.start {
			t.Errorf("slot %s = %q down=%v, want %q down=%v", tc.profile, yaml, down, want, !tc.start)
		}
		wantLog.WriteString("2026-05-21T06:18:05+0000 profile=" + tc.profile + " prior_state=" + tc.prior +
			" action=" + a.Label() + " prior_exit=" + tc.exit + "\n")
	}
	wantLog.WriteString("2026-05-21T06:18:05+0000 profile=bot prior_state=unknown action=skipped prior_exit=unknown\n")
	if got := readString(t, filepath.Join(w.home, "logs", BootLog)); got != wantLog.String() {
		t.Errorf("boot log =\n%s\nwant\n%s", got, wantLog.String())
	}
	if n := len(entries(t, w.scan)); n != len(tests) {
		t.Errorf("scandir holds %d entries %v, want %d (no temporaries)", n, entries(t, w.scan), len(tests))
	}
	for _, p := range []string{"gateway.pid", "processes.json", "profiles/coder/gateway.pid"} {
		if _, err := os.Lstat(filepath.Join(w.home, p)); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
	logs := w.logs.String()
	for _, skipped := range []string{"profiles/default", "profiles/Bad.Name", "profiles/xxx", "profiles/bot", "profiles/Bad.Link"} {
		if countLines(logs, skipped) != 1 {
			t.Errorf("want one warning about %s in\n%s", skipped, logs)
		}
	}
	if strings.Contains(logs, "nosoul") || strings.Contains(logs, "profiles/file") {
		t.Errorf("dirs without SOUL.md should be skipped silently:\n%s", logs)
	}
}

func TestRunBootstrap(t *testing.T) {
	tests := []struct {
		name      string
		existing  string // root gateway_state.json; "" = absent
		bootstrap string
		wantFile  string // "" = absent
		wantStart bool
	}{
		{"seeds when absent", "", "running", `{"gateway_state":"running"}`, true},
		{"keeps stopped", `{"gateway_state":"stopped"}`, "running", `{"gateway_state":"stopped"}`, false},
		{"not asked", "", "", "", false},
		{"other value", "", "stopped", "", false},
		// hermes compares the value exactly (its test_non_running_value_ignored).
		{"Running", "", "Running", "", false},
		{"spaced", "", " running", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			p := filepath.Join(w.home, gwstate.StateFileName)
			if tc.existing != "" {
				writeFile(t, p, tc.existing)
			}
			actions, err := w.run(t, false, tc.bootstrap)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != tc.wantFile {
				t.Errorf("state file = %q, want %q", got, tc.wantFile)
			}
			if len(actions) != 1 || actions[0].Start != tc.wantStart {
				t.Errorf("actions = %+v, want default start=%v", actions, tc.wantStart)
			}
		})
	}
}

func TestBootLogRotation(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		rotated bool
	}{
		{"empty", 0, false},
		{"just below", bootLogMax - 1, false},
		{"at limit", bootLogMax, true},
		{"above", bootLogMax + 4096, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			mkdir(t, filepath.Join(w.home, "logs"))
			p := filepath.Join(w.home, "logs", BootLog)
			old := strings.Repeat("o", tc.size)
			writeFile(t, p, old)
			writeFile(t, p+".1", "older")
			if _, err := w.run(t, false, ""); err != nil {
				t.Fatal(err)
			}
			line := "2026-05-21T06:18:05+0000 profile=default prior_state=none action=registered prior_exit=unknown\n"
			wantLog, wantOne := old+line, "older"
			if tc.rotated {
				wantLog, wantOne = line, old
			}
			if got := readString(t, p); got != wantLog {
				t.Errorf("log holds %d bytes, want %d", len(got), len(wantLog))
			}
			if got := readString(t, p+".1"); got != wantOne {
				t.Errorf("log.1 holds %d bytes, want %d", len(got), len(wantOne))
			}
		})
	}
}

// A slot that already exists (a boot hook made it) is kept and reported.
func TestRunExistingSlot(t *testing.T) {
	w := newWorld(t)
	mkdir(t, filepath.Join(w.scan, "gateway-default"))
	writeFile(t, filepath.Join(w.scan, "gateway-default", "service.yaml"), "command: [x]\n")
	actions, err := w.run(t, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || !strings.Contains(actions[0].Warning, "already exists") {
		t.Errorf("actions = %+v", actions)
	}
	if got := readString(t, filepath.Join(w.scan, "gateway-default", "service.yaml")); got != "command: [x]\n" {
		t.Errorf("existing slot changed: %q", got)
	}
}

// A scandir hermes cannot write fails every profile with an error that
// says why, and no action is claimed.
func TestRunScandirNotWritable(t *testing.T) {
	w := newWorld(t)
	os.Chown(w.scan, 0, 0)
	actions, err := w.run(t, false, "")
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("err = %v, want permission denied", err)
	}
	if len(actions) != 0 {
		t.Errorf("actions = %+v, want none", actions)
	}
}

func TestRunOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"relative home", Options{Home: "home", Scandir: "/run/service", Template: "gateway"}},
		{"relative scandir", Options{Home: "/opt/data", Scandir: "svc", Template: "gateway"}},
		{"no template", Options{Home: "/opt/data", Scandir: "/run/service"}},
		{"bad template", Options{Home: "/opt/data", Scandir: "/run/service", Template: "../x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Run(tc.opts); err == nil {
				t.Error("Run accepted bad options")
			}
		})
	}
}

func TestActionLabel(t *testing.T) {
	got := []string{Action{Start: true}.Label(), Action{}.Label()}
	if want := []string{"started", "registered"}; !reflect.DeepEqual(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
}

// A record of hinit's whose gateway_state.json is gone is stale: it
// describes a file that no longer exists. An `hsvc stop gateway-default`
// once left {stopped, replaced: running}; the user then removed the state
// file to bootstrap again. The seeded file, and a file hermes writes later
// without desired_state, were taken for the gateway's revert of hinit's
// write: the root gateway stayed down, and hinit wrote "stopped" into them.
func TestStaleRecordForgotten(t *testing.T) {
	stale := `{"desired_state":"stopped","replaced":"running","written_at":"2026-01-01T00:00:00.000000+00:00"}`
	t.Run("seeded", func(t *testing.T) {
		w := newWorld(t)
		writeFile(t, filepath.Join(w.home, gwstate.RecordName), stale)
		actions, err := w.run(t, false, "running")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(w.home, gwstate.StateFileName))
		if len(actions) != 1 || !actions[0].Start {
			t.Errorf("actions = %+v, want default started; gateway_state.json now %s", actions, got)
		}
	})
	t.Run("written by hermes after a boot without it", func(t *testing.T) {
		w := newWorld(t)
		writeFile(t, filepath.Join(w.home, gwstate.RecordName), stale)
		if actions, err := w.run(t, false, ""); err != nil || len(actions) != 1 || actions[0].Start || actions[0].Prior != "none" {
			t.Fatalf("boot without a state file: %+v, %v; want default down, prior none", actions, err)
		}
		writeFile(t, filepath.Join(w.home, gwstate.StateFileName), `{"gateway_state":"running"}`)
		os.RemoveAll(w.scan) // a new container: a fresh tmpfs scandir
		mkdir(t, w.scan)
		if actions, err := w.run(t, false, ""); err != nil || len(actions) != 1 || !actions[0].Start || actions[0].Warning != "" {
			t.Errorf("boot after hermes wrote running: %+v, %v; want default started", actions, err)
		}
	})
}
