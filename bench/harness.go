package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Harness runs the scenarios and collects their rows.
type Harness struct {
	hinit, hsvc, probe string // absolute paths of the binaries under test
	quick              bool
	keep               bool // keep each instance's dir (logs, configs) for a look afterwards
	set                settings
	res                *Results
	tmp                string
	seq                int
	log                io.Writer
	systems            map[string]bool // -systems; nil: all
}

// settings are the sizes of one mode: quick (< 2 min) or full (< 20 min).
type settings struct {
	runs      int           // repetitions of a cheap measurement
	heavyRuns int           // repetitions when supervisord (seconds per start) is involved
	bigRuns   int           // repetitions at 1000 services
	sizes     []int         // service counts of the memory and cold start scenarios
	bigSD     bool          // supervisord at 1000 services too (11 s per start)
	settle    time.Duration // after all services are up, before memory is read
	window    time.Duration // idle window; the crash loop is watched over it too
	restarts  int           // SIGKILL restarts per system
	stopT     time.Duration // kill timeout of the service that ignores TERM
	ctlRuns   int           // control round trips per system
	bareRuns  int           // runs of each bare measurement: sub-millisecond, noisy figures
	orphans   int           // orphans per run
}

var quickSettings = settings{runs: 3, heavyRuns: 1, bigRuns: 2, sizes: []int{3, 100, 1000}, settle: 500 * time.Millisecond,
	window: 10 * time.Second, restarts: 3, stopT: time.Second, ctlRuns: 10, bareRuns: 10, orphans: 1000}

var fullSettings = settings{runs: 9, heavyRuns: 3, bigRuns: 5, sizes: []int{3, 100, 1000}, bigSD: true, settle: 2 * time.Second,
	window: 30 * time.Second, restarts: 7, stopT: 2 * time.Second, ctlRuns: 30, bareRuns: 60, orphans: 1000}

// phase is a group of scenarios that share their set-up.
type phase struct {
	name string
	run  func(h *Harness) error
}

var phases = []phase{
	{"boot", (*Harness).phaseBoot},
	{"bare", (*Harness).phaseBare},
	{"start", (*Harness).phaseStart},
	{"soak", (*Harness).phaseSoak},
	{"rename", (*Harness).phaseRename},
	{"control", (*Harness).phaseControl},
	{"shutdown", (*Harness).phaseShutdown},
	{"orphans", (*Harness).phaseOrphans},
	{"size", (*Harness).phaseSize},
}

// Main runs the benchmark command (hbench) and returns its exit status.
func Main(args []string) int {
	fs := flag.NewFlagSet("hbench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "quick mode: fewer runs and sizes, under two minutes")
	only := fs.String("only", "", "comma-separated phases to run: "+phaseNames())
	bin := fs.String("bin", "bin", "directory of hinit and hsvc")
	probe := fs.String("probe", "bench/tmp/bin/probe", "the probe binary")
	results := fs.String("results", "bench/results", "directory of the JSON results")
	docs := fs.String("docs", "docs", "directory of benchmarks.md and bench/*.svg (empty: none)")
	keep := fs.Bool("keep", false, "keep each instance's temporary dir")
	runs := fs.Int("runs", 0, "repetitions of a cheap measurement (0: the mode's)")
	sizes := fs.String("sizes", "", "service counts of the memory and cold start scenarios, e.g. 3,100 (empty: the mode's)")
	render := fs.String("render", "", "measure nothing: rewrite the docs from this results file")
	systems := fs.String("systems", "", "comma-separated systems to run (empty: all): hinit,s6,supervisord,tini,dumb-init,catatonit; the floors always run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *render != "" {
		if err := Render(*render, *docs, os.Stderr); err != nil {
			fmt.Fprintf(os.Stderr, "hbench: %v\n", err)
			return 1
		}
		return 0
	}
	h, err := newHarness(*bin, *probe, *quick, *keep)
	if err == nil {
		err = h.override(*runs, *sizes)
	}
	if err == nil && *systems != "" {
		err = h.only(strings.Split(*systems, ","))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "hbench: %v\n", err)
		return 1
	}
	defer h.cleanup()
	if err := h.runPhases(*only); err != nil {
		fmt.Fprintf(os.Stderr, "hbench: %v\n", err)
		return 1
	}
	if err := h.writeAll(*results, *docs); err != nil {
		fmt.Fprintf(os.Stderr, "hbench: %v\n", err)
		return 1
	}
	return 0
}

// override applies the -runs and -sizes flags.
func (h *Harness) override(runs int, sizes string) error {
	if runs > 0 {
		h.set.runs = runs
		h.set.bareRuns = 2 * runs
		h.set.heavyRuns = min(h.set.heavyRuns, runs)
		h.set.bigRuns = min(h.set.bigRuns, runs)
	}
	if sizes != "" {
		h.set.sizes = nil
		for _, f := range strings.Split(sizes, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				return fmt.Errorf("-sizes: bad count %q", f)
			}
			h.set.sizes = append(h.set.sizes, n)
		}
	}
	h.res.Settings = h.describeSettings()
	return nil
}

// only restricts the run to the named systems (the floors always run).
func (h *Harness) only(names []string) error {
	h.systems = map[string]bool{}
	for _, n := range names {
		known := slices.Contains([]string{sysHinit, sysS6, sysSupervisor, sysTini, sysDumbInit, sysCatatonit}, n)
		if !known {
			return fmt.Errorf("-systems: unknown system %q", n)
		}
		h.systems[n] = true
	}
	supervisors = slices.DeleteFunc(supervisors, func(s supervisor) bool { return !h.systems[s.name] })
	return nil
}

// wanted keeps the systems of list that this run measures.
func (h *Harness) wanted(list []string) []string {
	if h.systems == nil {
		return list
	}
	return slices.DeleteFunc(list, func(s string) bool { return s != sysFloor && !h.systems[s] })
}

func phaseNames() string {
	var out []string
	for _, p := range phases {
		out = append(out, p.name)
	}
	return strings.Join(out, ",")
}

// newHarness checks that every binary is there and makes the temp dir.
func newHarness(bin, probe string, quick, keep bool) (*Harness, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("must run as root: every init runs as PID 1 of a new PID namespace")
	}
	h := &Harness{quick: quick, keep: keep, log: os.Stderr, set: fullSettings}
	if quick {
		h.set = quickSettings
	}
	var err error
	for _, p := range []struct {
		dst  *string
		path string
	}{{&h.hinit, filepath.Join(bin, "hinit")}, {&h.hsvc, filepath.Join(bin, "hsvc")}, {&h.probe, probe}} {
		if *p.dst, err = filepath.Abs(p.path); err != nil {
			return nil, err
		}
		if _, err := os.Stat(*p.dst); err != nil {
			return nil, fmt.Errorf("%w (run make build, or scripts/bench)", err)
		}
	}
	for _, p := range []string{s6Svscan, supervisord, tiniPath, dumbInitPath, catatonitPath} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s missing: apt-get install -y s6 tini dumb-init catatonit supervisor", p)
		}
	}
	if h.tmp, err = os.MkdirTemp(tmpRoot(), "hbench-"); err != nil {
		return nil, err
	}
	h.res = &Results{Date: time.Now().Format("2006-01-02"), Mode: h.mode(),
		Machine: machine(), Versions: h.versions(), Settings: h.describeSettings()}
	h.res.Machine["loadavg_start"] = loadavg()
	return h, nil
}

func (h *Harness) mode() string {
	if h.quick {
		return "quick"
	}
	return "full"
}

// tmpRoot is where the instances' dirs go: /dev/shm when it is a tmpfs
// with room, since scandirs and runtime dirs live on tmpfs in a container
// (/run), and a disk's journal would only add noise; else $TMPDIR.
func tmpRoot() string {
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) == nil && st.Type == unix.TMPFS_MAGIC && st.Bavail*uint64(st.Bsize) >= 256<<20 {
		return "/dev/shm"
	}
	return os.TempDir()
}

// runPhases runs the selected phases in order; a failing phase is reported
// and the others still run.
func (h *Harness) runPhases(only string) error {
	sel := strings.Split(only, ",")
	ran := 0
	for _, p := range phases {
		if only != "" && !slices.Contains(sel, p.name) {
			continue
		}
		ran++
		start := time.Now()
		h.logf("== %s", p.name)
		if err := p.run(h); err != nil {
			h.logf("%s: %v", p.name, err)
		}
		h.logf("== %s done in %.1fs", p.name, time.Since(start).Seconds())
	}
	if ran == 0 {
		return fmt.Errorf("no phase named in %q; phases: %s", only, phaseNames())
	}
	return nil
}

// newDir makes a fresh dir for one instance.
func (h *Harness) newDir(system string) (string, error) {
	h.seq++
	dir := filepath.Join(h.tmp, fmt.Sprintf("%04d-%s", h.seq, system))
	return dir, os.MkdirAll(dir, 0o755)
}

// done kills an instance and removes its dir unless -keep.
func (h *Harness) done(in *instance) {
	in.kill()
	if !h.keep {
		os.RemoveAll(in.dir)
	}
}

// cleanup removes the temp dir unless -keep.
func (h *Harness) cleanup() {
	if h.keep {
		h.logf("instances' dirs kept in %s", h.tmp)
		return
	}
	os.RemoveAll(h.tmp)
}

// baseEnv is the environment every init starts with.
func (h *Harness) baseEnv() []string {
	return []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"}
}

func (h *Harness) logf(format string, args ...any) {
	fmt.Fprintf(h.log, "hbench: "+format+"\n", args...)
}

// startOneEach starts every supervisor with one sleeping service, svc0, and
// waits until it runs. The instances started so far are returned even on
// error, for doneAll.
func (h *Harness) startOneEach() ([]*instance, error) {
	var ins []*instance
	for _, sup := range supervisors {
		in, err := h.startWith(sup, sleepers(1))
		if err != nil {
			return ins, err
		}
		ins = append(ins, in)
		if _, err := in.waitUp(time.Now().Add(30*time.Second), 0, []string{"svc0"}); err != nil {
			return ins, fmt.Errorf("%s: svc0 not up: %w", sup.name, err)
		}
	}
	return ins, nil
}

// doneAll ends every instance.
func (h *Harness) doneAll(ins []*instance) {
	for _, in := range ins {
		h.done(in)
	}
}
