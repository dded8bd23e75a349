package bench

import (
	"fmt"
	"syscall"
	"time"
)

// phaseSoak runs the scenarios that need wall time, side by side so that
// their waits overlap: the idle window (100 services, wake-ups of the init
// counted over it), the crash loop (delays between starts over the same
// window) and SIGKILL restarts of services that have been running for more
// than 10 s (hinit's default backoff.reset_after).
func (h *Harness) phaseSoak() error {
	idle, err := h.startIdle()
	defer func() {
		for _, in := range idle {
			h.done(in)
		}
	}()
	if err != nil {
		return err
	}
	crash, restart, err := h.startCrashAndRestart()
	defer func() {
		for _, in := range append(crash, restart...) {
			h.done(in)
		}
	}()
	if err != nil {
		return err
	}
	h.measureIdle(idle)
	h.reportCrash(crash)
	for _, in := range crash {
		h.done(in)
	}
	crash = nil
	h.measureRestarts(restart)
	return nil
}

// idleServices is the workload of the idle scenario.
const idleServices = 100

// startIdle starts every system with 100 sleeping services (the simple
// inits: a main that starts 100 sleeping probes of its own) and waits
// until all are up.
func (h *Harness) startIdle() ([]*instance, error) {
	var out []*instance
	for _, sup := range supervisors {
		in, err := h.startWith(sup, sleepers(idleServices))
		if err != nil {
			return out, err
		}
		out = append(out, in)
	}
	for _, sys := range h.wanted([]string{sysTini, sysDumbInit, sysCatatonit}) {
		dir, err := h.newDir(sys)
		if err != nil {
			return out, err
		}
		argv := h.probeArgv(svc{name: "fleet", mode: "fleet", arg: fmt.Sprint(idleServices)})
		in, err := h.start(sys, dir, launch{argv: simpleInit(sys, argv)})
		if err != nil {
			return out, err
		}
		out = append(out, in)
	}
	for _, in := range out {
		want := names(sleepers(idleServices))
		if in.system == sysTini || in.system == sysDumbInit || in.system == sysCatatonit {
			for i := range want {
				want[i] = fmt.Sprintf("fleet-%d", i)
			}
		}
		if _, err := in.waitUp(time.Now().Add(60*time.Second), 0, want); err != nil {
			return out, fmt.Errorf("idle: %s: services not up: %w", in.system, err)
		}
	}
	return out, nil
}

// startCrashAndRestart starts, for each supervisor, one instance with a
// service that crashes at once, and one with the services to be killed.
func (h *Harness) startCrashAndRestart() (crash, restart []*instance, err error) {
	for _, sup := range supervisors {
		in, err := h.startWith(sup, []svc{{name: "crash0", mode: "crash", crash: true}})
		if err != nil {
			return crash, restart, err
		}
		crash = append(crash, in)
	}
	for _, sup := range supervisors {
		in, err := h.startWith(sup, sleepers(h.set.restarts))
		if err != nil {
			return crash, restart, err
		}
		restart = append(restart, in)
	}
	return crash, restart, nil
}

// measureIdle counts the wake-ups of each init (and of the whole
// supervision tree) over the window.
func (h *Harness) measureIdle(idle []*instance) {
	time.Sleep(time.Second) // let the last starts settle
	before := make([][2]int, len(idle))
	for i, in := range idle {
		before[i] = h.idleCounts(in)
	}
	time.Sleep(h.set.window)
	window := fmt.Sprintf("%gs", h.set.window.Seconds())
	for i, in := range idle {
		after := h.idleCounts(in)
		initW, treeW := float64(after[0]-before[i][0]), float64(after[1]-before[i][1])
		h.res.add("idle", in.system, "init wake-ups in "+window, "wake-ups", []float64{initW}, "")
		if in.system == sysS6 {
			h.res.add("idle", in.system, "tree wake-ups in "+window, "wake-ups", []float64{treeW}, "s6-svscan and every s6-supervise")
		}
		h.logf("idle: %-11s init %g, tree %g wake-ups in %s", in.system, initW, treeW, window)
	}
}

// idleCounts is the init's wake-ups and its supervision tree's.
func (h *Harness) idleCounts(in *instance) [2]int {
	initW, _ := wakeups(in.pid)
	tree := initW
	if in.system == sysS6 {
		tree = 0
		pids, _ := s6Tree(in)
		for _, p := range pids {
			w, _ := wakeups(p)
			tree += w
		}
	}
	return [2]int{initW, tree}
}

// reportCrash turns the starts of crash0 into the delays between them.
func (h *Harness) reportCrash(crash []*instance) {
	for _, in := range crash {
		ups := in.upsOf("crash0")
		var delays []float64
		for i := 1; i < len(ups); i++ {
			delays = append(delays, ms(ups[i].at-ups[i-1].at))
		}
		for i, d := range delays {
			h.res.add("crashloop", in.system, fmt.Sprintf("delay %02d", i+1), "ms", []float64{d}, "")
		}
		span := "no start"
		if len(ups) > 0 {
			span = fmt.Sprintf("over %.1fs", ms(mono()-ups[0].at)/1000)
		}
		h.res.add("crashloop", in.system, "starts", "starts", []float64{float64(len(ups))}, span)
		h.logf("crashloop: %-11s %d starts %s, delays (ms) %.0f", in.system, len(ups), span, delays)
	}
}

// measureRestarts kills each service (once it has been up for more than
// 10.5 s) with SIGKILL and times its next start; systems take turns.
func (h *Harness) measureRestarts(restart []*instance) {
	samples := map[string][]float64{}
	for k := range h.set.restarts {
		name := fmt.Sprintf("svc%d", k)
		for _, in := range restart {
			d, err := h.restartOnce(in, name)
			if err != nil {
				h.logf("restart: %s %s: %v", in.system, name, err)
				continue
			}
			samples[in.system] = append(samples[in.system], d)
		}
	}
	for _, in := range restart {
		h.res.add("restart", in.system, "SIGKILL after >10s up → running", "ms", samples[in.system], "")
		h.logf("restart: %-11s %s", in.system, brief(samples[in.system], "ms"))
	}
}

// restartOnce kills the current instance of name and waits for the next.
func (h *Harness) restartOnce(in *instance, name string) (float64, error) {
	ups := in.upsOf(name)
	if len(ups) == 0 {
		return 0, fmt.Errorf("never up")
	}
	last := ups[len(ups)-1]
	if wait := time.Duration(last.at + int64(10500*time.Millisecond) - mono()); wait > 0 {
		time.Sleep(wait)
	}
	pid, err := hostPID(in.pid, last.pid)
	if err != nil {
		return 0, err
	}
	from := in.mark()
	t0 := mono()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill: %w", err)
	}
	at, err := in.waitUp(time.Now().Add(10*time.Second), from, []string{name})
	if err != nil {
		return 0, fmt.Errorf("no new instance: %w", err)
	}
	return ms(at - t0), nil
}
