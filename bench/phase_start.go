package bench

import (
	"fmt"
	"time"
)

// phaseStart measures, for N services, the cold start (t0 → the last
// service's stamp) and, once everything has settled, the PSS of the
// supervision tree with the services (and hinit's main) left out, and the
// init's thread count.
func (h *Harness) phaseStart() error {
	for _, n := range h.set.sizes {
		cold := map[string][]float64{}
		pss := map[string][]float64{}
		thr := map[string][]float64{}
		for r := range h.set.runs {
			if r < h.set.bigRuns || n < 1000 {
				if c, err := h.coldFloorOnce(n); err != nil {
					h.logf("start: floor N=%d: %v", n, err)
				} else {
					cold[sysFloor] = append(cold[sysFloor], c)
				}
			}
			for _, sup := range supervisors {
				if !h.startRuns(sup.name, n, r) {
					continue
				}
				c, p, t, err := h.startOnce(sup, n)
				if err != nil {
					h.logf("start: %s N=%d: %v", sup.name, n, err)
					continue
				}
				cold[sup.name] = append(cold[sup.name], c)
				pss[sup.name] = append(pss[sup.name], p)
				thr[sup.name] = append(thr[sup.name], t)
			}
		}
		h.res.add("coldstart", sysFloor, fmt.Sprintf("N=%d", n), "ms", cold[sysFloor], "")
		h.logf("start: N=%-4d %-11s cold %s", n, sysFloor, brief(cold[sysFloor], "ms"))
		for _, sup := range supervisors {
			note := ""
			if sup.name == sysSupervisor && n >= 1000 && !h.set.bigSD {
				note = "not run in quick mode (11 s per start)"
			}
			metric := fmt.Sprintf("N=%d", n)
			h.res.add("coldstart", sup.name, metric, "ms", cold[sup.name], note)
			h.res.add("memory", sup.name, metric, "MB", pss[sup.name], note)
			h.res.add("threads", sup.name, metric, "threads", thr[sup.name], note)
			h.logf("start: N=%-4d %-11s cold %s; PSS %s", n, sup.name, brief(cold[sup.name], "ms"), brief(pss[sup.name], "MB"))
		}
	}
	return nil
}

// startRuns says whether run r of sup at n services is done: supervisord
// takes seconds per start (11 s at 1000), everyone takes longer at 1000.
func (h *Harness) startRuns(system string, n, r int) bool {
	switch {
	case system == sysSupervisor && n >= 1000:
		return h.set.bigSD && r < min(2, h.set.heavyRuns)
	case system == sysSupervisor:
		return r < h.set.heavyRuns
	case n >= 1000:
		return r < h.set.bigRuns
	}
	return true
}

// startOnce starts sup with n sleeping services and returns the cold
// start in ms, the tree's PSS in MB and the init's threads.
func (h *Harness) startOnce(sup supervisor, n int) (cold, pss, thr float64, err error) {
	in, err := h.startWith(sup, sleepers(n))
	if err != nil {
		return 0, 0, 0, err
	}
	defer h.done(in)
	last, err := in.waitUp(time.Now().Add(90*time.Second), 0, names(sleepers(n)))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("not all %d services up: %w", n, err)
	}
	time.Sleep(h.set.settle)
	kb, err := treePSS(sup, in)
	if err != nil {
		return 0, 0, 0, err
	}
	t, err := threads(in.pid)
	return ms(last - in.t0), float64(kb) * 1024 / 1e6, float64(t), err
}

// startWith prepares sup's configuration for svcs in a fresh dir and
// starts it.
func (h *Harness) startWith(sup supervisor, svcs []svc) (*instance, error) {
	dir, err := h.newDir(sup.name)
	if err != nil {
		return nil, err
	}
	l, err := sup.prepare(h, dir, svcs)
	if err != nil {
		return nil, err
	}
	return h.start(sup.name, dir, l)
}

// treePSS sums the PSS of sup's supervision tree, in KiB.
func treePSS(sup supervisor, in *instance) (int, error) {
	pids, err := sup.tree(in)
	if err != nil {
		return 0, err
	}
	sum := 0
	for _, p := range pids {
		kb, err := pssKB(p)
		if err != nil {
			return 0, err
		}
		sum += kb
	}
	return sum, nil
}

// coldFloorOnce is the cold start's floor: the probe itself as PID 1
// forks and execs n sleeping probes one after the other (fleet mode), with
// nothing else to do; from t0 to the last one's stamp, in ms.
func (h *Harness) coldFloorOnce(n int) (float64, error) {
	dir, err := h.newDir(sysFloor)
	if err != nil {
		return 0, err
	}
	in, err := h.start(sysFloor, dir, launch{argv: h.probeArgv(svc{name: "svc", mode: "fleet", arg: fmt.Sprint(n)})})
	if err != nil {
		return 0, err
	}
	defer h.done(in)
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("svc-%d", i)
	}
	last, err := in.waitUp(time.Now().Add(90*time.Second), 0, want)
	if err != nil {
		return 0, fmt.Errorf("not all %d children up: %w", n, err)
	}
	return ms(last - in.t0), nil
}
