package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// phaseSize reports what each system ships: its PID 1 program, its control
// client and everything it needs, stripped as installed (hinit: as
// `make build` builds it, -s -w), and whether the PID 1 program is static.
func (h *Harness) phaseSize() error {
	lib := "/usr/lib/x86_64-linux-gnu/"
	sets := []struct {
		system    string
		pid1, ctl []string
		all       []string
		extraNote string
	}{
		{system: sysHinit, pid1: []string{h.hinit}, ctl: []string{h.hsvc}},
		{system: sysS6, pid1: []string{s6Svscan, "/usr/bin/s6-supervise"},
			ctl:       []string{"/usr/bin/s6-svc", s6Svstat, s6Svscanctl},
			all:       []string{lib + "libs6.so.2.11.3.2", lib + "libskarnet.so.2.13.1.1"},
			extraNote: "pid1 = s6-svscan + s6-supervise; all adds libs6 and libskarnet (libc not counted)"},
		{system: sysSupervisor, pid1: []string{supervisord, supervisorPkg},
			ctl: []string{supervisorctl, supervisorPkg}, extraNote: "the Python package; the python3 interpreter and stdlib are not counted"},
		{system: sysTini, pid1: []string{tiniPath}, extraNote: "tini-static: " + sizeNote("/usr/bin/tini-static")},
		{system: sysDumbInit, pid1: []string{dumbInitPath}},
		{system: sysCatatonit, pid1: []string{catatonitPath}},
	}
	for _, s := range sets {
		p1, c := bytesOf(s.pid1), bytesOf(s.ctl)
		a := bytesOf(slices.Compact(slices.Sorted(slices.Values(slices.Concat(s.pid1, s.ctl, s.all)))))
		link := linkage(s.pid1[0])
		h.res.add("size", s.system, "PID 1 program", "MB", []float64{mb(p1)}, strings.TrimSpace(link+"; "+s.extraNote))
		if len(s.ctl) > 0 {
			h.res.add("size", s.system, "control client", "MB", []float64{mb(c)}, linkage(s.ctl[0]))
		}
		h.res.add("size", s.system, "everything", "MB", []float64{mb(a)}, "")
		h.logf("size: %-11s pid1 %.2f MB (%s), client %.2f MB, all %.2f MB", s.system, mb(p1), link, mb(c), mb(a))
	}
	return nil
}

// supervisorPkg is supervisord's Python package, which its client shares.
const supervisorPkg = "/usr/lib/python3/dist-packages/supervisor"

// mb is bytes in MB (10^6).
func mb(b int64) float64 { return float64(b) / 1e6 }

// bytesOf sums the sizes of files and dirs.
func bytesOf(paths []string) int64 {
	var sum int64
	for _, p := range paths {
		filepath.Walk(p, func(_ string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				sum += fi.Size()
			}
			return nil
		})
	}
	return sum
}

// linkage says whether file(1) calls the program static, dynamic or a script.
func linkage(path string) string {
	out, err := exec.Command("file", "-L", path).Output()
	switch s := string(out); {
	case err != nil:
		return "?"
	case strings.Contains(s, "statically linked") || strings.Contains(s, "static-pie"):
		return "static"
	case strings.Contains(s, "dynamically linked"):
		return "dynamic"
	case strings.Contains(s, "script"):
		return "script"
	case strings.Contains(s, "directory"):
		return "dir"
	}
	return "?"
}

func sizeNote(path string) string {
	return fmt.Sprintf("%.2f MB %s", mb(bytesOf([]string{path})), linkage(path))
}
