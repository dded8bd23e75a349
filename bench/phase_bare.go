package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"time"
)

// Metrics of the bare scenario.
const (
	bareRun      = "`-- /bin/true`: start → exit"
	bareTerm     = "SIGTERM → PID 1 gone, sleeping main"
	bareRunNoSig = "`-- /bin/true`, no signal caught: start → exit"
)

// phaseBare measures hinit's bare mode (no hinit.yaml: SPEC §7) beside
// tini, both as PID 1 of a fresh namespace: from t0 to PID 1 gone with
// /bin/true as main, and from SIGTERM to PID 1 gone with a sleeping probe
// as main (forwarded TERM, main dies, the init exits). The floor is what
// any Go PID 1 pays for the same: the probe as a minimal Go init (mode
// init: the signals hinit catches, fork, forward, reap), measured alike;
// and, start → exit only, the probe as a Go PID 1 that catches no signal
// (mode run: fork, exec, wait4), the Go runtime's own share of it.
func (h *Harness) phaseBare() error {
	if _, err := os.Stat("/etc/hinit/hinit.yaml"); err == nil {
		h.logf("bare: /etc/hinit/hinit.yaml exists here, so hinit is not bare: skipped")
		return nil
	}
	systems := append([]string{sysFloor}, h.wanted([]string{sysHinit, sysTini})...)
	run, term := map[string][]float64{}, map[string][]float64{}
	var noSig []float64
	for r := -1; r < h.set.bareRuns; r++ { // run -1 warms the page cache
		// A new order each round: where a run falls in the round moves
		// its time (the first of six programs in a fixed order gained
		// about 5% on the others, against a shuffled order).
		round := slices.Clone(systems)
		rand.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		for _, sys := range round {
			d, err := h.bareRunOnce(sys, h.bareArgv(sys, []string{"/bin/true"}))
			if err != nil {
				h.logf("bare: %s: %v", sys, err)
			} else if r >= 0 {
				run[sys] = append(run[sys], d)
			}
			if sys == sysFloor {
				if d, err = h.bareRunOnce(sys, []string{h.probe, "run", "--", "/bin/true"}); err != nil {
					h.logf("bare: %s, no signal caught: %v", sys, err)
				} else if r >= 0 {
					noSig = append(noSig, d)
				}
			}
			if d, err = h.bareTermOnce(sys); err != nil {
				h.logf("bare: %s: %v", sys, err)
			} else if r >= 0 {
				term[sys] = append(term[sys], d)
			}
		}
	}
	notes := map[string]string{sysFloor: "a minimal Go init: the signals hinit catches, fork, forward, reap"}
	for _, sys := range systems {
		h.res.add("bare", sys, bareRun, "ms", run[sys], notes[sys])
		h.res.add("bare", sys, bareTerm, "ms", term[sys], notes[sys])
		h.logf("bare: %-6s %s %s; %s %s", sys, bareRun, brief(run[sys], "ms"), bareTerm, brief(term[sys], "ms"))
	}
	h.res.add("bare", sysFloor, bareRunNoSig, "ms", noSig, "a Go PID 1 that catches no signal (not an init): fork, exec, wait4")
	h.logf("bare: %-6s %s %s", sysFloor, bareRunNoSig, brief(noSig, "ms"))
	return nil
}

// bareArgv is sys running argv with no configuration at all.
func (h *Harness) bareArgv(sys string, argv []string) []string {
	switch sys {
	case sysHinit:
		return append([]string{h.hinit, "--"}, argv...)
	case sysFloor:
		return append([]string{h.probe, "init", "--"}, argv...)
	}
	return simpleInit(sys, argv)
}

// bareRunOnce times argv, sys's, as PID 1 from t0 to gone.
func (h *Harness) bareRunOnce(sys string, argv []string) (float64, error) {
	dir, err := h.newDir(sys)
	if err != nil {
		return 0, err
	}
	in, err := h.start(sys, dir, launch{argv: argv})
	if err != nil {
		return 0, err
	}
	defer h.done(in)
	if err := in.waitGone(10 * time.Second); err != nil {
		return 0, err
	}
	return ms(in.goneAt - in.t0), nil
}

func (h *Harness) bareTermOnce(sys string) (float64, error) {
	dir, err := h.newDir(sys)
	if err != nil {
		return 0, err
	}
	in, err := h.start(sys, dir, launch{argv: h.bareArgv(sys, h.probeArgv(svc{name: "main", mode: "sleep"}))})
	if err != nil {
		return 0, err
	}
	defer h.done(in)
	if _, err := in.waitUp(time.Now().Add(10*time.Second), 0, []string{"main"}); err != nil {
		return 0, fmt.Errorf("main never reported: %w", err)
	}
	time.Sleep(settleBeforeTerm)
	t0 := mono()
	if err := syscall.Kill(in.pid, syscall.SIGTERM); err != nil {
		return 0, err
	}
	if err := in.waitGone(10 * time.Second); err != nil {
		return 0, err
	}
	return ms(in.goneAt - t0), nil
}
