package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"hinit/gwstate"
	"hinit/supervise"
)

// TestConfigRepeatedKeysAreCheap: config.yaml is the hermes user's file, read
// by PID 1 at boot and at each register. Thousands of repeated keys cost a
// few MB to parse; decoded into a struct, yaml.v3 compared every pair of
// keys and built an error for each (4,000 keys: about 1 GB allocated).
func TestConfigRepeatedKeysAreCheap(t *testing.T) {
	var b strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&b, "k: %d\n", i)
	}
	b.WriteString("agent: {restart_drain_timeout: 5}\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := DrainTimeout("", []byte(b.String()))
	runtime.ReadMemStats(&after)
	if got != 5*time.Second {
		t.Errorf("DrainTimeout = %v, want 5s", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("parsing %d bytes of repeated keys allocated %d MiB, want at most 64", b.Len(), n>>20)
	}
	// Merges of merges: each level merges the one below 50 times, eight
	// levels deep: 50^8 searches if each merge were searched anew.
	b.Reset()
	b.WriteString("l0: &l0 {x: 1}\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "l%d: &l%d {<<: [%s]}\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 50), ", "))
	}
	b.WriteString("agent: {<<: *l8}\n")
	if got := DrainTimeout("", []byte(b.String())); got != 0 {
		t.Errorf("DrainTimeout through merges = %v, want 0", got)
	}
	// Many merge keys in one mapping: each put in front of the ones
	// before it, copying them, cost their number squared (6.4 GB
	// allocated for these 20,000; minutes of PID 1's time for 1 MiB).
	b.Reset()
	b.WriteString("x: &a {y: 1}\n" + strings.Repeat("<<: *a\n", 20000) + "agent: {restart_drain_timeout: 5}\n")
	runtime.ReadMemStats(&before)
	got = DrainTimeout("", []byte(b.String()))
	runtime.ReadMemStats(&after)
	if got != 5*time.Second {
		t.Errorf("DrainTimeout = %v, want 5s", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("parsing %d merge keys allocated %d MiB, want at most 64", 20000, n>>20)
	}
}

func TestMultiplex(t *testing.T) {
	tests := []struct {
		env, config string
		want        bool
	}{
		{"", "", false},
		{"true", "", true},
		{"ON", "", true},
		{" 1 ", "multiplex_profiles: false", true},
		{"false", "multiplex_profiles: true", false},
		{"0", "gateway: {multiplex_profiles: true}", false},
		{"", "multiplex_profiles: true", true},
		{"", "gateway:\n  multiplex_profiles: true\n", true},
		{"maybe", "multiplex_profiles: true", true}, // unrecognised env: unset
		{"", "multiplex_profiles: \"yes\"", true},
		// Not a string: Python's bool(), as hermes reads it.
		{"", "multiplex_profiles: [true]", true},
		{"", "multiplex_profiles: 1", true},
		{"", "multiplex_profiles: 1.0", true},
		{"", "multiplex_profiles: 0", false},
		{"", "multiplex_profiles: []", false},
		{"", "multiplex_profiles: {}", false},
		{"", "multiplex_profiles: ~\ngateway: {multiplex_profiles: true}", true}, // null is unset
		{"", "multiplex_profiles: enabled", false},                               // a string is a word, or off
		{"", "{not yaml", false},
		{"", "multiplex_profiles: false\ngateway: {multiplex_profiles: true}", false}, // top level wins
		{"", "multiplex_profiles: false\nmultiplex_profiles: true", true},             // the last of repeated keys
		{"", "on: &on true\ngateway: {multiplex_profiles: *on}", true},
		{"", "multiplex_profiles: []\ngateway: {multiplex_profiles: true}", false}, // set at the top, if empty
		{"", "d: &d {multiplex_profiles: true}\ngateway: {<<: *d}", true},          // merge keys, as PyYAML
	}
	for _, tc := range tests {
		if got := Multiplex(tc.env, []byte(tc.config)); got != tc.want {
			t.Errorf("Multiplex(%q, %q) = %v, want %v", tc.env, tc.config, got, tc.want)
		}
	}
}

func TestDrainTimeout(t *testing.T) {
	tests := []struct {
		env, config string
		want        time.Duration
	}{
		{"", "", 0},
		{"", "agent: {restart_drain_timeout: 20}", 20 * time.Second},
		{"", "agent: {restart_drain_timeout: 1.5}", 1500 * time.Millisecond},
		{"", "agent: {restart_drain_timeout: \"180\"}", 180 * time.Second},
		// config.yaml wins over the environment, as hermes' gateway
		// bridges it ("config.yaml unconditionally wins").
		{"60", "agent: {restart_drain_timeout: 20}", 20 * time.Second},
		{"60", "", 60 * time.Second},
		{"60", "agent: {restart_drain_timeout: soon}", 0},
		{"1e400", "", time.Hour - DrainMargin}, // Python's float: inf
		{"  ", "agent: {restart_drain_timeout: 20}", 20 * time.Second},
		{"", "agent: {restart_drain_timeout: -5}", 0},
		{"", "agent: {restart_drain_timeout: soon}", 0},
		{"", "agent: {restart_drain_timeout: 1e9}", time.Hour - DrainMargin},
		{"NaN", "", 0},
		// Past what a Duration holds: the cap, not the template's 7 s.
		{"1e12", "", time.Hour - DrainMargin},
		{"inf", "", time.Hour - DrainMargin},
		{"", "agent: {restart_drain_timeout: 1e12}", time.Hour - DrainMargin},
		// Repeated keys: the last wins, as in hermes' PyYAML.
		{"", "agent: {restart_drain_timeout: 5}\nagent: {restart_drain_timeout: 7}", 7 * time.Second},
		{"", "agent: {restart_drain_timeout: 5, restart_drain_timeout: 9}", 9 * time.Second},
		{"", "d: &d 12\nagent: {restart_drain_timeout: *d}", 12 * time.Second},
		{"", "agent: [restart_drain_timeout]", 0},
		{"", "agent: {restart_drain_timeout: null}", 0},
		// Merge keys, as in hermes' PyYAML: the mapping's own key first,
		// then the merged ones, the earlier first.
		{"", "d: &d {restart_drain_timeout: 60}\nagent: {<<: *d}", 60 * time.Second},
		{"", "d: &d {restart_drain_timeout: 60}\nagent: {<<: *d, restart_drain_timeout: 5}", 5 * time.Second},
		{"", "a: &a {restart_drain_timeout: 1}\nb: &b {restart_drain_timeout: 2}\nagent: {<<: [*a, *b]}", time.Second},
		{"", "a: &a {restart_drain_timeout: 1}\nb: &b {restart_drain_timeout: 2}\nagent: {<<: *a, <<: *b}", 2 * time.Second},
	}
	for _, tc := range tests {
		if got := DrainTimeout(tc.env, []byte(tc.config)); got != tc.want {
			t.Errorf("DrainTimeout(%q, %q) = %v, want %v", tc.env, tc.config, got, tc.want)
		}
	}
}

// The stop budget is hermes' own (resolve_systemd_timeout_stop_sec): the
// longer of the chat drain and the cron drain plus 10 s, plus 30 s, at
// least 60 s.
func TestStopTimeout(t *testing.T) {
	s := time.Second
	for _, tc := range []struct{ drain, cron, want time.Duration }{
		{0, DefaultCronDrain, 70 * s}, // hermes' defaults
		{0, 0, 60 * s},                // cron drain opted out: the floor
		{20 * s, 0, 60 * s},
		{20 * s, 30 * s, 70 * s},
		{180 * s, 30 * s, 210 * s},
		{0, 120 * s, 160 * s},
		{time.Hour - 30*s, time.Hour - 30*s, time.Hour}, // at most an hour
	} {
		if got := StopTimeout(tc.drain, tc.cron); got != tc.want {
			t.Errorf("StopTimeout(%v, %v) = %v, want %v", tc.drain, tc.cron, got, tc.want)
		}
	}
	for _, tc := range []struct {
		env, config string
		want        time.Duration
	}{
		{"", "", DefaultCronDrain},
		{"", "agent: {cron_drain_timeout: 0}", 0},
		{"", "agent: {cron_drain_timeout: 90}", 90 * s},
		{"5", "agent: {cron_drain_timeout: 90}", 90 * s}, // config.yaml wins
		{"5", "", 5 * s},
		{"", "agent: {cron_drain_timeout: soon}", DefaultCronDrain},
		{"-3", "", 0},
	} {
		if got, _ := cronDrain(tc.env, parseConfig([]byte(tc.config))); got != tc.want {
			t.Errorf("cronDrain(%q, %q) = %v, want %v", tc.env, tc.config, got, tc.want)
		}
	}
}

func TestDashboardOnly(t *testing.T) {
	tests := map[string]bool{
		"dashboard --port 9119":              true,
		"hermes dashboard":                   true,
		"/opt/hermes/bin/hermes dashboard":   true,
		"":                                   false,
		"hermes":                             false,
		"gateway run":                        false,
		"sleep infinity":                     false,
		"hermes -p coder dashboard":          false, // container_boot looks at the first word only
		"hermes chat -q dashboard":           false,
		"/usr/local/bin/dashboard --no-open": false,
		// The s6 image's entrypoint, kept: /init (hinit now) gets the wrapper.
		"/opt/hermes/docker/main-wrapper.sh dashboard --host 0.0.0.0":                            true,
		"/opt/hermes/docker/main-wrapper.sh hermes dashboard":                                    true,
		"/opt/hermes/docker/entrypoint-dispatch.sh dashboard":                                    true,
		"/opt/hermes/docker/entrypoint-dispatch.sh /opt/hermes/docker/main-wrapper.sh dashboard": true,
		"/opt/hermes/docker/main-wrapper.sh":                                                     false,
		"/opt/hermes/docker/main-wrapper.sh gateway run":                                         false,
		"/opt/hermes/docker/main-wrapper.sh sleep infinity":                                      false,
	}
	for cmd, want := range tests {
		if got := DashboardOnly(strings.Fields(cmd)); got != want {
			t.Errorf("DashboardOnly(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestFailingGateways(t *testing.T) {
	now := testNow
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	exit := func(code int, sig syscall.Signal) *supervise.Exit { return &supervise.Exit{Code: code, Signal: sig} }
	gw := func(name string, state supervise.State, want supervise.Want, since, failing time.Time, last *supervise.Exit) supervise.Status {
		return supervise.Status{Name: "gateway-" + name, Source: "template:gateway", State: state, Want: want,
			Since: since, FailingSince: failing, LastExit: last, Reason: "why " + name}
	}
	sts := []supervise.Status{
		gw("loop", supervise.StateBackoff, "up", ago(time.Second), ago(3*time.Minute), exit(1, 0)),
		gw("young", supervise.StateBackoff, "up", ago(time.Second), ago(30*time.Second), exit(1, 0)),
		gw("gaveup", supervise.StateFailed, "up", ago(5*time.Minute), ago(6*time.Minute), exit(1, 0)),
		gw("fatal", supervise.StateExited, "up", ago(10*time.Minute), time.Time{}, exit(78, 0)),
		gw("done", supervise.StateExited, "up", ago(10*time.Minute), time.Time{}, exit(0, 0)),
		gw("stopped", supervise.StateFailed, "down", ago(10*time.Minute), ago(10*time.Minute), exit(1, 0)),
		gw("running", supervise.StateUp, "up", ago(10*time.Minute), ago(20*time.Minute), exit(1, 0)),
		{Name: "dashboard", Source: "static", State: supervise.StateFailed, Want: "up", Since: ago(time.Hour)},
	}
	isGateway := func(st supervise.Status) bool { return st.Source.Template() == "gateway" }
	got := FailingGateways(sts, isGateway, now, time.Minute)
	var names []string
	for _, f := range got {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != "gateway-loop gateway-gaveup gateway-fatal" {
		t.Errorf("failing %v, want gateway-loop gateway-gaveup gateway-fatal", names)
	}
	if len(got) > 0 && got[0].String() != "gateway-loop backoff for 3m0s: why loop" {
		t.Errorf("line %q", got[0].String())
	}
	if FailingGateways(sts, isGateway, now, 0) != nil {
		t.Error("grace 0 must turn the check off")
	}
	err := CheckGateways(sts, isGateway, now, time.Hour)
	if err != nil {
		t.Errorf("grace 1h: %v", err)
	}
	err = CheckGateways(sts, isGateway, now, 5*time.Minute)
	if !errors.Is(err, ErrGatewayFailing) || !strings.Contains(err.Error(), "gateway-gaveup failed for 6m0s: why gaveup; gateway-fatal exited for 10m0s") {
		t.Errorf("grace 5m: %v", err)
	}
}

// With multiplexing on (root config.yaml, or the env), named profiles are
// registered down whatever their state says, the root one still starts;
// a profile's stop budget (hermes' own, of its drains) becomes its slot's
// stop_timeout.
func TestRunMultiplexAndDrain(t *testing.T) {
	for _, tc := range []struct {
		name, env, config string
		multiplex         bool
	}{
		{"config.yaml", "", "multiplex_profiles: true\n", true},
		{"env", "true", "", true},
		{"env off over config.yaml", "false", "gateway: {multiplex_profiles: true}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			writeFile(t, filepath.Join(w.home, gwstate.StateFileName), `{"desired_state":"running"}`)
			writeFile(t, filepath.Join(w.home, ConfigFile), tc.config)
			coder := w.profile(t, "coder", `{"desired_state":"running"}`)
			writeFile(t, filepath.Join(coder, ConfigFile), "agent:\n  restart_drain_timeout: 60\n")
			w.profile(t, "idle", `{"desired_state":"stopped"}`)
			actions, err := Run(Options{Home: w.home, Scandir: w.scan, Template: "gateway",
				Env: map[string]string{EnvMultiplex: tc.env}, Now: func() time.Time { return testNow },
				Logger: slog.New(slog.NewTextHandler(&w.logs, nil))})
			if err != nil || len(actions) != 3 {
				t.Fatalf("Run = %+v, %v", actions, err)
			}
			want := map[string][2]bool{"default": {true, false}, "coder": {!tc.multiplex, tc.multiplex}, "idle": {false, tc.multiplex}}
			for _, a := range actions {
				if w := want[a.Profile]; a.Start != w[0] || a.Multiplexed != w[1] {
					t.Errorf("%s: start %v multiplexed %v, want %v %v", a.Profile, a.Start, a.Multiplexed, w[0], w[1])
				}
				if _, down := w.slot(t, "gateway-"+a.Profile); down == a.Start {
					t.Errorf("%s: slot down %v, start %v", a.Profile, down, a.Start)
				}
			}
			if y, _ := w.slot(t, "gateway-coder"); !strings.Contains(y, "stop_timeout: 1m30s") || actions[1].StopTimeout != 90*time.Second {
				t.Errorf("coder's slot %q (stop timeout %v), want stop_timeout: 1m30s", y, actions[1].StopTimeout)
			}
			if y, _ := w.slot(t, "gateway-idle"); !strings.Contains(y, "stop_timeout: 1m10s") {
				t.Errorf("idle's slot %q, want hermes' default budget, stop_timeout: 1m10s", y)
			}
		})
	}
}

// A desired_state the gateway's rewrite reverted (hinit's record says what
// hinit wrote): the record counts and is written back into the file.
func TestRunRevertedDesiredState(t *testing.T) {
	w := newWorld(t)
	dir := w.profile(t, "coder", `{"desired_state":"running","gateway_state":"stopped","pid":7}`)
	writeFile(t, filepath.Join(dir, gwstate.RecordName), `{"desired_state":"stopped","replaced":"running","written_at":"x"}`)
	chown(t, filepath.Join(dir, gwstate.StateFileName))
	chown(t, filepath.Join(dir, gwstate.RecordName))
	actions, err := w.run(t, false, "")
	if err != nil || len(actions) != 2 {
		t.Fatalf("Run = %+v, %v", actions, err)
	}
	if a := actions[1]; a.Profile != "coder" || a.Start || a.Prior != "stopped" {
		t.Errorf("coder: %+v, want registered down with prior stopped", a)
	}
	if got := readString(t, filepath.Join(dir, gwstate.StateFileName)); !strings.Contains(got, `"desired_state":"stopped"`) || !strings.Contains(got, `"pid":7`) {
		t.Errorf("gateway_state.json not repaired: %s", got)
	}
	if !strings.Contains(w.logs.String(), "lost desired_state stopped") {
		t.Errorf("no warning in %s", w.logs.String())
	}
	// No rewrite of the gateway's is in flight at a boot: the write back
	// is settled, and a later start by someone else (the s6 image on the
	// same volume) is one at the boot after.
	if got := readString(t, filepath.Join(dir, gwstate.RecordName)); !strings.Contains(got, `"settled":true`) {
		t.Errorf("record after the write back: %s; want it settled", got)
	}
	writeFile(t, filepath.Join(dir, gwstate.StateFileName), `{"desired_state":"running","gateway_state":"running","updated_at":"2026-12-01T10:00:00.000000+00:00"}`)
	os.RemoveAll(w.scan) // a new container: a fresh tmpfs scandir
	mkdir(t, w.scan)
	if actions, err := w.run(t, false, ""); err != nil || len(actions) != 2 || !actions[1].Start {
		t.Errorf("boot after a later start: %+v, %v; want coder started", actions, err)
	}
}

// When the root gateway multiplexes, a named profile's running intent
// moves to the root slot (hermes' fold): a container only ever driven as
// `hermes -p coder gateway start` came back with no gateway at all. A
// profile with gateway.standalone keeps its own slot and intent; the key
// means nothing on the root profile, nor without multiplexing.
func TestRunFold(t *testing.T) {
	type want struct{ start, multiplexed, folded bool }
	for _, tc := range []struct {
		name, rootConfig, rootState string
		named                       map[string]string // name → state file; "standalone" in the name adds gateway.standalone
		want                        map[string]want
	}{
		{"a named intent starts the root", "multiplex_profiles: true\n", `{"desired_state":"stopped"}`,
			map[string]string{"coder": `{"desired_state":"running"}`, "idle": `{"desired_state":"stopped"}`},
			map[string]want{"default": {true, false, true}, "coder": {false, true, true}, "idle": {false, true, false}}},
		{"no state at the root", "gateway: {multiplex_profiles: 1}\n", "",
			map[string]string{"coder": `{"gateway_state":"draining"}`},
			map[string]want{"default": {true, false, true}, "coder": {false, true, true}}},
		{"nothing wants running", "multiplex_profiles: true\n", "",
			map[string]string{"idle": `{"desired_state":"stopped"}`},
			map[string]want{"default": {false, false, false}, "idle": {false, true, false}}},
		{"standalone keeps its slot", "multiplex_profiles: true\n", "",
			map[string]string{"standalone": `{"desired_state":"running"}`, "standalone-idle": `{"desired_state":"stopped"}`},
			map[string]want{"default": {false, false, false}, "standalone": {true, false, false}, "standalone-idle": {false, false, false}}},
		{"no multiplexing: each its own", "gateway: {standalone: true}\n", "",
			map[string]string{"coder": `{"desired_state":"running"}`, "standalone": `{"desired_state":"running"}`},
			map[string]want{"default": {false, false, false}, "coder": {true, false, false}, "standalone": {true, false, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.rootState != "" {
				writeFile(t, filepath.Join(w.home, gwstate.StateFileName), tc.rootState)
			}
			writeFile(t, filepath.Join(w.home, ConfigFile), tc.rootConfig)
			for name, state := range tc.named {
				dir := w.profile(t, name, state)
				if strings.HasPrefix(name, "standalone") {
					writeFile(t, filepath.Join(dir, ConfigFile), "gateway:\n  standalone: true\n")
				}
			}
			actions, err := w.run(t, false, "")
			if err != nil || len(actions) != len(tc.want) {
				t.Fatalf("Run = %+v, %v", actions, err)
			}
			for _, a := range actions {
				if got := (want{a.Start, a.Multiplexed, a.Folded}); got != tc.want[a.Profile] {
					t.Errorf("%s: start, multiplexed, folded = %v, want %v", a.Profile, got, tc.want[a.Profile])
				}
				if _, down := w.slot(t, "gateway-"+a.Profile); down == a.Start {
					t.Errorf("%s: slot down %v, start %v", a.Profile, down, a.Start)
				}
			}
		})
	}
}

func TestStandalone(t *testing.T) {
	for config, want := range map[string]bool{
		"": false, "gateway: {standalone: true}": true, "gateway: {standalone: false}": false,
		"gateway: {standalone: 1}": true, "gateway: {standalone: 0}": false,
		// A string is a word, as hermes' _standalone_truthy reads it (and
		// PyYAML reads yes, no, on and off as booleans already).
		"gateway: {standalone: \"false\"}": false, "gateway: {standalone: \"true\"}": true, "gateway: {standalone: off}": false,
		"gateway: {standalone: no}": false, "gateway: {standalone: yes}": true, "gateway: {standalone: maybe}": false,
		"gateway: {standalone: []}": false, "gateway: {standalone: ~}": false, "gateway: [standalone]": false,
		"standalone: true": false,
	} {
		if got := parseConfig([]byte(config)).Standalone; got != want {
			t.Errorf("Standalone of %q = %v, want %v", config, got, want)
		}
	}
}

// What the fold cannot read is said: a named profile whose config.yaml is
// not read is taken as not standalone, and a root whose state file is
// corrupt but which starts for the profiles it serves does not say it was
// registered down.
func TestRunFoldWarnings(t *testing.T) {
	w := newWorld(t)
	writeFile(t, filepath.Join(w.home, gwstate.StateFileName), "{corrupt")
	writeFile(t, filepath.Join(w.home, ConfigFile), "multiplex_profiles: true\n")
	solo := w.profile(t, "solo", `{"desired_state":"running"}`)
	writeFile(t, filepath.Join(w.outside, ConfigFile), "gateway: {standalone: true}\n")
	if err := os.Symlink(filepath.Join(w.outside, ConfigFile), filepath.Join(solo, ConfigFile)); err != nil {
		t.Fatal(err)
	}
	actions, err := w.run(t, false, "")
	if err != nil || len(actions) != 2 {
		t.Fatalf("Run = %+v, %v", actions, err)
	}
	root, named := actions[0], actions[1]
	if !root.Start || !root.Folded || !strings.HasSuffix(root.Warning, ": started all the same, for the named profiles it serves") {
		t.Errorf("root: %+v; want started for solo, its corrupt state said so", root)
	}
	if named.Start || !named.Multiplexed || named.Warning != "gateway.standalone not known: taken as not standalone, served by the default gateway" {
		t.Errorf("solo: %+v; want folded, with a warning that its config.yaml was not read", named)
	}
}

// A record a boot reads the file through is settled, whatever the file
// says: no gateway runs at a boot, so none of its rewrites is in flight.
// Left unsettled (hinit's stop kept by the file, or hermes' CLI's start
// taken over it), it spoke again at the boot after, once the gateway's own
// rewrite had restamped the file: the s6 image's start, or the CLI's, was
// taken for a revert and undone.
func TestRunSettlesRecordsItReads(t *testing.T) {
	for _, tc := range []struct {
		name, state string
		start       bool // at the first boot
	}{
		{"the file kept hinit's stop", `{"desired_state":"stopped","gateway_state":"stopped","updated_at":"2026-11-28T12:44:57.000000+00:00"}`, false},
		{"hermes' CLI started it since", `{"desired_state":"running","gateway_state":"stopped","updated_at":1764590400}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			dir := w.profile(t, "coder", tc.state)
			writeFile(t, filepath.Join(dir, gwstate.RecordName), `{"desired_state":"stopped","replaced":"running","written_at":"x"}`)
			chown(t, filepath.Join(dir, gwstate.StateFileName))
			chown(t, filepath.Join(dir, gwstate.RecordName))
			if actions, err := w.run(t, false, ""); err != nil || len(actions) != 2 || actions[1].Start != tc.start {
				t.Fatalf("first boot: %+v, %v; want coder started %v", actions, err, tc.start)
			}
			// Later: a start (the s6 image on the same volume, or the CLI's
			// own), and the gateway's rewrite restamps updated_at.
			writeFile(t, filepath.Join(dir, gwstate.StateFileName), `{"desired_state":"running","gateway_state":"running","updated_at":"2026-12-01T10:00:00.000000+00:00"}`)
			os.RemoveAll(w.scan) // a new container: a fresh tmpfs scandir
			mkdir(t, w.scan)
			if actions, err := w.run(t, false, ""); err != nil || len(actions) != 2 || !actions[1].Start {
				t.Errorf("boot after the start: %+v, %v; want coder started; log:\n%s", actions, err, w.logs.String())
			}
		})
	}
}
