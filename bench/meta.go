package bench

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// machine describes where the figures were measured.
func machine() map[string]string {
	m := map[string]string{"cpus": fmt.Sprint(runtime.NumCPU()), "go": runtime.Version()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m["kernel"] = unix.ByteSliceToString(u.Release[:])
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m["cpu"] = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/etc/debian_version"); err == nil {
		m["debian"] = strings.TrimSpace(string(b))
	}
	return m
}

// versions are the peers' Debian package versions and hinit's own.
func (h *Harness) versions() map[string]string {
	v := map[string]string{}
	for _, pkg := range []string{"s6", "supervisor", "tini", "dumb-init", "catatonit", "python3"} {
		out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
		if err == nil {
			v[pkg] = strings.TrimSpace(string(out))
		}
	}
	if out, err := exec.Command(h.hinit, "--version").Output(); err == nil {
		v["hinit"] = strings.TrimSpace(string(out))
	}
	return v
}

// describeSettings records the mode's sizes in the results.
func (h *Harness) describeSettings() map[string]string {
	s := h.set
	return map[string]string{
		"runs": fmt.Sprint(s.runs), "heavy_runs": fmt.Sprint(s.heavyRuns), "runs_at_1000": fmt.Sprint(s.bigRuns), "sizes": fmt.Sprint(s.sizes),
		"supervisord_1000": fmt.Sprint(s.bigSD), "settle": s.settle.String(), "idle_window": s.window.String(),
		"restarts": fmt.Sprint(s.restarts), "stop_timeout": s.stopT.String(), "control_runs": fmt.Sprint(s.ctlRuns), "bare_runs": fmt.Sprint(s.bareRuns),
		"orphans": fmt.Sprint(s.orphans), "tmp_root": tmpRoot(),
	}
}
