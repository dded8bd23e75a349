package bench

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"time"
)

// phaseControl times the control round trip as a user sees it: the status
// of one service, client start included (fork+exec+wait of the client,
// from the harness). The floor is fork+exec+wait of the probe doing
// nothing: the part of hsvc's figure that is a Go program's start.
func (h *Harness) phaseControl() error {
	ins, err := h.startOneEach()
	defer h.doneAll(ins)
	if err != nil {
		return err
	}
	clients := h.clients(ins)
	samples := make([][]float64, len(clients))
	for r := -1; r < h.set.ctlRuns; r++ {
		for i, c := range clients {
			time.Sleep(20 * time.Millisecond) // let the previous client's aftermath settle
			d, err := timeCommand(c.argv, c.env)
			if err != nil {
				h.logf("control: %s: %v", c.system, err)
				continue
			}
			if r >= 0 {
				samples[i] = append(samples[i], d)
			}
		}
	}
	for i, c := range clients {
		h.res.add("control", c.system, "status round trip", "ms", samples[i], c.note)
		h.logf("control: %-38s %s", c.system, brief(samples[i], "ms"))
	}
	return nil
}

// client is one control command to time.
type client struct {
	system, note string
	argv, env    []string
}

// clients are the status commands of the floor and of each system run, in
// ins's order.
func (h *Harness) clients(ins []*instance) []client {
	cs := []client{{sysFloor, "probe exit: fork+exec+wait of a static Go program", []string{h.probe, "exit"}, nil}}
	for _, in := range ins {
		switch in.system {
		case sysHinit:
			cs = append(cs, client{sysHinit, "hsvc status svc0", []string{h.hsvc, "status", "svc0"}, hinitEnv(in.dir, "")})
		case sysS6:
			cs = append(cs,
				client{sysS6, "s6-svstat (reads supervise/status)", []string{s6Svstat, filepath.Join(in.dir, "scandir", "svc0")}, nil},
				client{sysS6 + " (s6-svscanctl)", "s6-svscanctl -a (writes to the control FIFO)", []string{s6Svscanctl, "-a", filepath.Join(in.dir, "scandir")}, nil})
		case sysSupervisor:
			cs = append(cs, client{sysSupervisor, "supervisorctl status svc0", []string{supervisorctl, "-c", filepath.Join(in.dir, "supervisord.conf"), "status", "svc0"}, nil})
		}
	}
	return cs
}

// timeCommand runs argv to completion and returns its wall time in ms.
func timeCommand(argv, env []string) (float64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}, env...)
	t0 := mono()
	err := cmd.Run()
	d := ms(mono() - t0)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", argv[0], err)
	}
	return d, nil
}
