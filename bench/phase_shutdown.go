package bench

import (
	"fmt"
	"syscall"
	"time"
)

// phaseShutdown times SIGTERM to PID 1 → PID 1 gone (waited for by the
// harness, its parent): with N cooperative services, and with three
// services of which one ignores TERM and has a kill timeout T.
func (h *Harness) phaseShutdown() error {
	h.shutdownFloors()
	for _, n := range []int{3, 100} {
		h.shutdownScenario("shutdown", fmt.Sprintf("N=%d", n), sleepers(n), 0)
	}
	stuck := sleepers(3)
	stuck[2] = svc{name: "svc2", mode: "ignore-term", stopT: h.set.stopT}
	h.shutdownScenario("shutdown-stuck", fmt.Sprintf("T=%s", h.set.stopT), stuck, h.set.stopT)
	return nil
}

// shutdownScenario runs every supervisor with svcs, runs times, and adds
// the rows; with a kill timeout T it also reports the time beyond T.
func (h *Harness) shutdownScenario(scenario, metric string, svcs []svc, T time.Duration) {
	samples := map[string][]float64{}
	runs := h.set.runs
	if T == 0 {
		runs = h.shutdownRuns()
	}
	for r := range runs {
		for _, sup := range supervisors {
			if sup.name == sysSupervisor && r >= h.set.heavyRuns {
				continue
			}
			d, err := h.shutdownOnce(sup, svcs, T)
			if err != nil {
				h.logf("%s: %s %s: %v", scenario, sup.name, metric, err)
				continue
			}
			samples[sup.name] = append(samples[sup.name], d)
		}
	}
	for _, sup := range supervisors {
		h.res.add(scenario, sup.name, "SIGTERM → PID 1 gone, "+metric, "ms", samples[sup.name], "")
		h.logf("%s: %-11s %s %s", scenario, sup.name, metric, brief(samples[sup.name], "ms"))
		if T > 0 {
			beyond := make([]float64, len(samples[sup.name]))
			for i, d := range samples[sup.name] {
				beyond[i] = d - msDur(T)
			}
			h.res.add(scenario, sup.name, "beyond T", "ms", beyond, "")
		}
	}
}

// shutdownOnce starts sup with svcs, waits until all are up, sends SIGTERM
// to PID 1 and returns the time until the harness has waited for it.
func (h *Harness) shutdownOnce(sup supervisor, svcs []svc, T time.Duration) (float64, error) {
	in, err := h.startWith(sup, svcs)
	if err != nil {
		return 0, err
	}
	defer h.done(in)
	if _, err := in.waitUp(time.Now().Add(60*time.Second), 0, names(svcs)); err != nil {
		return 0, fmt.Errorf("services not up: %w", err)
	}
	time.Sleep(settleBeforeTerm)
	t0 := mono()
	if err := syscall.Kill(in.pid, syscall.SIGTERM); err != nil {
		return 0, err
	}
	if err := in.waitGone(T + 20*time.Second); err != nil {
		return 0, fmt.Errorf("PID 1 still there after %s: %w", T+20*time.Second, err)
	}
	return ms(in.goneAt - t0), nil
}

// shutdownFloors measures what exiting at SIGTERM costs a Go program that
// is PID 1 and supervises nothing: once as is, once holding one inotify
// watch. The second is the floor of anything that watches a scandir with
// inotify (SPEC §3): closing an inotify instance waits in the kernel for
// an SRCU grace period before the process may exit.
func (h *Harness) shutdownFloors() {
	for _, watch := range []bool{false, true} {
		metric := "SIGTERM → PID 1 gone, no inotify"
		if watch {
			metric = "SIGTERM → PID 1 gone, one inotify watch"
		}
		var samples []float64
		for range h.shutdownRuns() {
			d, err := h.shutdownFloorOnce(watch)
			if err != nil {
				h.logf("shutdown: floor %s: %v", metric, err)
				continue
			}
			samples = append(samples, d)
		}
		h.res.add("shutdown", sysFloor, metric, "ms", samples, "")
		h.logf("shutdown: %-11s %s %s", sysFloor, metric, brief(samples, "ms"))
	}
}

func (h *Harness) shutdownFloorOnce(watch bool) (float64, error) {
	dir, err := h.newDir(sysFloor)
	if err != nil {
		return 0, err
	}
	p := svc{name: "main", mode: "term-exit"}
	if watch {
		p.arg = dir
	}
	in, err := h.start(sysFloor, dir, launch{argv: h.probeArgv(p)})
	if err != nil {
		return 0, err
	}
	defer h.done(in)
	if _, _, err := in.waitEvent(time.Now().Add(10*time.Second), 0, func(e event) bool { return e.kind == "armed" }); err != nil {
		return 0, fmt.Errorf("the probe never caught SIGTERM: %w", err)
	}
	time.Sleep(settleBeforeTerm) // as the supervisors get: the same idle machine at SIGTERM
	t0 := mono()
	if err := syscall.Kill(in.pid, syscall.SIGTERM); err != nil {
		return 0, err
	}
	if err := in.waitGone(20 * time.Second); err != nil {
		return 0, err
	}
	return ms(in.goneAt - t0), nil
}

// settleBeforeTerm lets a supervisor finish its start bookkeeping before
// SIGTERM; the floors wait the same, so that every system is signalled
// from the same idle state.
const settleBeforeTerm = 200 * time.Millisecond

// shutdownRuns is how many times a quick shutdown is measured: three times
// the usual, because the kernel's teardown of an inotify instance makes these
// times bimodal (about 1 ms or 15-20 ms here), and a median of 9 can land
// on either side.
func (h *Harness) shutdownRuns() int { return 3 * h.set.runs }
