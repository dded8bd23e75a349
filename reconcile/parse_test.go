package reconcile

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"hinit/gwstate"
)

// config.yaml is the hermes user's file, of up to configMax bytes, and
// each hsvc register of a gateway has PID 1 parse its profile's: its tree
// takes about 100 MiB. 16 registers at once (one uid's share of requests)
// took PID 1 from 5 MB to 2.4 GB of RSS, seen in a PID namespace with
// 16 profiles of a 1 MiB `[1,1,...]`; now one is parsed at a time. (Eight
// of a quarter of that here, for the test's time under -race.)
func TestConfigParsesOneAtATime(t *testing.T) {
	const n = 8
	home := t.TempDir()
	huge := "[" + strings.Repeat("1,", configMax/8) + "]" // 256 KiB: about 25 MiB of tree
	want, _, _ := SlotStopTimeout(home, nil)              // no config.yaml
	var dirs []string
	for i := range n {
		d := filepath.Join(home, fmt.Sprintf("p%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, ConfigFile), []byte(huge), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	grew := heapGrowth(func() {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, d := range dirs {
			wg.Go(func() {
				<-start
				if stop, _, err := SlotStopTimeout(d, nil); err != nil || stop != want {
					t.Errorf("SlotStopTimeout(%s) = %v, %v; want %v, no error", d, stop, err, want)
				}
			})
		}
		close(start)
		wg.Wait()
	}) >> 20
	if grew > 100 {
		t.Errorf("%d parses of a %d-byte config.yaml at once grew the heap by %d MiB, want at most 100", n, len(huge), grew)
	}
}

// SlotStopTimeout parses config.yaml once: it parsed it for the drain and
// again for the cron drain. A boot parses every profile's, before the
// static services start: 65 profiles of a 1 MiB `[1,1,...]` held the
// boot for 33 s.
func TestSlotStopTimeoutParsesOnce(t *testing.T) {
	dir := t.TempDir()
	data := []byte("[" + strings.Repeat("1,", 1<<15) + "]")
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	allocs := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	one := allocs(func() { parseConfig(data) })
	slot := allocs(func() { SlotStopTimeout(dir, nil) })
	if slot > one+one/2 {
		t.Errorf("SlotStopTimeout allocated %d KiB, one parse %d KiB: want at most one parse and a half", slot>>10, one>>10)
	}
}

// A boot parses at most bootConfigBudget bytes of the profiles'
// config.yaml in all: past it a profile's drain budget comes from the
// environment alone, with a warning naming the file. Before, every file
// was parsed, one after the other, before the static services and main
// started: 65 profiles of a 1 MiB config.yaml held the boot 19 s.
func TestBootConfigBudget(t *testing.T) {
	defer func(b int) { bootConfigBudget = b }(bootConfigBudget)
	bootConfigBudget = 100 << 10
	w := newWorld(t)
	cfg := "agent:\n  restart_drain_timeout: 600\n# " + strings.Repeat("x", 60<<10) + "\n"
	for _, name := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(w.profile(t, name, `{"desired_state":"running"}`), ConfigFile), cfg)
	}
	actions, err := Run(Options{Home: w.home, Scandir: w.scan, Template: "gateway",
		Now: func() time.Time { return testNow }, Logger: slog.New(slog.NewTextHandler(&w.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Duration{}
	for _, a := range actions {
		got[a.Profile] = a.StopTimeout
	}
	want := map[string]time.Duration{"default": 70 * time.Second, "a": 630 * time.Second, "b": 70 * time.Second, "c": 70 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stop timeouts %v, want %v (a's from its config.yaml, b's and c's past the budget)", got, want)
	}
	if n := strings.Count(w.logs.String(), "config.yaml not parsed: this boot's 100 KiB of config.yaml parses are spent"); n != 2 {
		t.Errorf("%d warnings of the spent budget, want 2 (b, c):\n%s", n, w.logs.String())
	}
}

// A boot reads at most bootStateBudget bytes of the profiles' state files
// in all: past it a profile is registered down, with a warning naming its
// file. Before, each of gateway_state.json, hinit's record and the
// lifecycle sentinel was read up to 4 MiB in every profile: the hermes
// user hard-linked three 4 MiB files into a thousand profiles and held the
// boot, and PID 1's CPU, for minutes.
func TestBootStateBudget(t *testing.T) {
	defer func(b int) { bootStateBudget = b }(bootStateBudget)
	bootStateBudget = 8 << 10
	w := newWorld(t)
	writeFile(t, filepath.Join(w.home, gwstate.StateFileName), `{"desired_state":"running"}`)
	big := `{"desired_state":"running","pad":"` + strings.Repeat("x", 6<<10) + `"}`
	for name, state := range map[string]string{"a": big, "b": big, "c": `{"desired_state":"running"}`} {
		w.profile(t, name, state)
	}
	actions, err := Run(Options{Home: w.home, Scandir: w.scan, Template: "gateway",
		Now: func() time.Time { return testNow }, Logger: slog.New(slog.NewTextHandler(&w.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, a := range actions {
		got[a.Profile] = a.Start
		if spent := strings.Contains(a.Warning, "gateway_state.json not read: this boot's budget of state file reads is spent: registered down"); spent != (a.Profile == "b" || a.Profile == "c") {
			t.Errorf("%s: warning %q", a.Profile, a.Warning)
		}
	}
	if want := map[string]bool{"default": true, "a": true, "b": false, "c": false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("started %v, want %v (b's and c's past the budget)", got, want)
	}
}
