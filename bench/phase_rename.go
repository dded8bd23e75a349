package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// phaseRename times a service dir renamed into the scandir until the
// service runs. hinit watches its scandir (no call); s6 needs
// `s6-svscanctl -a` after the rename, which is included; supervisord has no
// scandir: a [program:] file is renamed into its include dir and
// `supervisorctl update` is run, also included. Last, s6 is given one
// rename without the call, to show that it never starts by itself.
func (h *Harness) phaseRename() error {
	ins, err := h.startOneEach()
	defer h.doneAll(ins)
	if err != nil {
		return err
	}
	samples := map[string][]float64{}
	for r := range h.set.runs * 2 {
		for _, in := range ins {
			d, err := h.renameOnce(in, fmt.Sprintf("ren%d", r), true)
			if err != nil {
				h.logf("rename: %s: %v", in.system, err)
				continue
			}
			samples[in.system] = append(samples[in.system], d)
		}
	}
	notes := map[string]string{sysHinit: "no extra call", sysS6: "includes s6-svscanctl -a",
		sysSupervisor: "[program:] file renamed into conf.d, includes supervisorctl update"}
	for _, in := range ins {
		h.res.add("rename", in.system, "rename → running", "ms", samples[in.system], notes[in.system])
		h.logf("rename: %-11s %s", in.system, brief(samples[in.system], "ms"))
	}
	for _, in := range ins { // hinit and s6 (of the systems run), without any call
		if in.system != sysHinit && in.system != sysS6 {
			continue
		}
		started := 0.0
		if _, err := h.renameOnce(in, "nocall", false); err == nil {
			started = 1
		}
		h.res.add("rename", in.system, "started without a call within 1s", "yes=1", []float64{started}, "")
		h.logf("rename: %-11s without a call: started=%g", in.system, started)
	}
	return nil
}

// renameOnce adds service name to in's system by an atomic rename (and the
// system's rescan call when call is set) and returns the time until the
// probe's stamp.
func (h *Harness) renameOnce(in *instance, name string, call bool) (float64, error) {
	hidden, final, err := h.stage(in, name)
	if err != nil {
		return 0, err
	}
	from := in.mark()
	t0 := mono()
	if err := os.Rename(hidden, final); err != nil {
		return 0, fmt.Errorf("rename: %w", err)
	}
	if call {
		if err := h.rescan(in); err != nil {
			return 0, err
		}
	}
	at, err := in.waitUp(time.Now().Add(time.Second), from, []string{name})
	if err != nil {
		return 0, fmt.Errorf("%s not running: %w", name, err)
	}
	return ms(at - t0), nil
}

// stage writes the new service under a hidden name and returns the hidden
// and final paths.
func (h *Harness) stage(in *instance, name string) (string, string, error) {
	s := svc{name: name, mode: "sleep"}
	switch in.system {
	case sysHinit:
		scan := filepath.Join(in.dir, "scandir")
		hidden := filepath.Join(scan, "."+name+".tmp")
		if err := os.MkdirAll(hidden, 0o755); err != nil {
			return "", "", err
		}
		err := os.WriteFile(filepath.Join(hidden, "service.yaml"), []byte(hinitService(h, s, "")), 0o644)
		return hidden, filepath.Join(scan, name), err
	case sysS6:
		scan := filepath.Join(in.dir, "scandir")
		hidden := filepath.Join(scan, "."+name)
		return hidden, filepath.Join(scan, name), s6ServiceDir(h, hidden, s)
	default:
		confd := filepath.Join(in.dir, "conf.d")
		hidden := filepath.Join(confd, "."+name+".tmp")
		err := os.WriteFile(hidden, []byte(supervisordProgram(h, s)), 0o644)
		return hidden, filepath.Join(confd, name+".conf"), err
	}
}

// rescan is the call each system needs to notice a new service.
func (h *Harness) rescan(in *instance) error {
	var cmd *exec.Cmd
	switch in.system {
	case sysHinit:
		return nil
	case sysS6:
		cmd = exec.Command(s6Svscanctl, "-a", filepath.Join(in.dir, "scandir"))
	default:
		cmd = exec.Command(supervisorctl, "-c", filepath.Join(in.dir, "supervisord.conf"), "update")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", cmd.Args[0], err, out)
	}
	return nil
}
