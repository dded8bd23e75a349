package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// phaseBoot measures boot to main exec: from the instant before the init's
// execve (t0) to the probe's stamp as the init's main program. The floor
// is the same probe forked and exec'd by the namespace's first process
// with no init in between.
func (h *Harness) phaseBoot() error {
	systems := h.wanted([]string{sysFloor, sysHinit, sysTini, sysDumbInit, sysCatatonit})
	samples := map[string][]float64{}
	for r := -1; r < h.set.runs*2; r++ { // run -1 warms the page cache
		for _, sys := range systems {
			d, err := h.bootOnce(sys)
			if err != nil {
				h.logf("boot: %s: %v", sys, err)
				continue
			}
			if r >= 0 {
				samples[sys] = append(samples[sys], d)
			}
		}
	}
	for _, sys := range systems {
		h.res.add("boot", sys, "boot to main exec", "ms", samples[sys], "")
		h.logf("boot: %-10s %s", sys, brief(samples[sys], "ms"))
	}
	return nil
}

// bootOnce starts sys with a main that stamps and exits.
func (h *Harness) bootOnce(sys string) (float64, error) {
	dir, err := h.newDir(sys)
	if err != nil {
		return 0, err
	}
	main := h.probeArgv(svc{name: "main", mode: "exit"})
	var l launch
	switch sys {
	case sysFloor:
		l = launch{argv: main, fork: true}
	case sysHinit: // an empty hinit.yaml: the tini-like defaults
		cfg := filepath.Join(dir, "hinit.yaml")
		if err := os.WriteFile(cfg, nil, 0o644); err != nil {
			return 0, err
		}
		l = launch{argv: append([]string{h.hinit}, main...), env: hinitEnv(dir, cfg)}
	default:
		l = launch{argv: simpleInit(sys, main)}
	}
	in, err := h.start(sys, dir, l)
	if err != nil {
		return 0, err
	}
	defer h.done(in)
	at, err := in.waitUp(time.Now().Add(10*time.Second), 0, []string{"main"})
	if err != nil {
		return 0, fmt.Errorf("main never reported: %w", err)
	}
	in.waitGone(10 * time.Second)
	return ms(at - in.t0), nil
}

// brief is a one-line summary for progress output.
func brief(samples []float64, unit string) string {
	s := summarize(samples)
	if s.n == 0 {
		return "no result"
	}
	return fmt.Sprintf("median %.3g %s (%.3g–%.3g, %d runs)", s.median, unit, s.min, s.max, s.n)
}
