package bench

import (
	"fmt"
	"strconv"
	"time"
)

// phaseOrphans times the reaping of a storm of orphans: a probe (main, or
// an s6 service) has a child start N sleepers, kill them and wait until all
// are zombies; the child then exits, the kernel reparents the N zombies to
// PID 1, and the probe, as soon as its wait for the child returns (t0),
// watches until no pid of theirs exists (t1). The floor is the probe
// reaping N zombie children of its own with wait4. The kernel's work of
// ending the child and reparenting its zombies is reported apart.
func (h *Harness) phaseOrphans() error {
	systems := h.wanted([]string{sysFloor, sysHinit, sysTini, sysDumbInit, sysCatatonit, sysS6})
	reap := map[string][]float64{}
	exit := map[string][]float64{}
	for range h.set.runs {
		for _, sys := range systems {
			r, e, err := h.orphansOnce(sys)
			if err != nil {
				h.logf("orphans: %s: %v", sys, err)
				continue
			}
			reap[sys] = append(reap[sys], r)
			if sys != sysFloor {
				exit[sys] = append(exit[sys], e)
			}
		}
	}
	metric := fmt.Sprintf("%d orphans reparented → all reaped", h.set.orphans)
	for _, sys := range systems {
		note := ""
		if sys == sysFloor {
			note = "the probe reaps the same number of zombies of its own with wait4: no reparenting, no init"
		}
		h.res.add("orphans", sys, metric, "ms", reap[sys], note)
		if sys != sysFloor {
			h.res.add("orphans", sys, "their parent's exit + reparenting (kernel)", "ms", exit[sys], "not the init's work: the same for every init")
		}
		h.logf("orphans: %-11s %s; parent exit %s", sys, brief(reap[sys], "ms"), brief(exit[sys], "ms"))
	}
	return nil
}

// orphansOnce runs one storm under sys and returns its reaping time.
func (h *Harness) orphansOnce(sys string) (reap, exit float64, err error) {
	dir, err := h.newDir(sys)
	if err != nil {
		return 0, 0, err
	}
	storm := svc{name: "storm", mode: "orphans", arg: fmt.Sprint(h.set.orphans)}
	var l launch
	switch sys {
	case sysFloor:
		storm.mode = "reap-self"
		l = launch{argv: h.probeArgv(storm), fork: true}
	case sysHinit:
		l, err = prepareHinit(h, dir, nil)
		l.argv = append([]string{h.hinit}, h.probeArgv(storm)...)
	case sysS6:
		l, err = prepareS6(h, dir, []svc{storm})
	default:
		l = launch{argv: simpleInit(sys, h.probeArgv(storm))}
	}
	if err != nil {
		return 0, 0, err
	}
	in, err := h.start(sys, dir, l)
	if err != nil {
		return 0, 0, err
	}
	defer h.done(in)
	ev, _, err := in.waitEvent(time.Now().Add(60*time.Second), 0, func(e event) bool { return e.kind == "reaped" })
	if err != nil {
		return 0, 0, fmt.Errorf("no report: %w", err)
	}
	if len(ev.extra) < 2 {
		return 0, 0, fmt.Errorf("bad report %v", ev.extra)
	}
	t1, _ := strconv.ParseInt(ev.extra[0], 10, 64)
	if len(ev.extra) > 2 {
		tExit, _ := strconv.ParseInt(ev.extra[2], 10, 64)
		exit = ms(ev.at - tExit)
	}
	return ms(t1 - ev.at), exit, nil
}
