package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// proc is a process of an init's namespace, seen from the harness's.
type proc struct {
	pid   int // in the harness's namespace
	nsPID int // in the init's namespace
	comm  string
}

// members lists the processes of the PID namespace whose init is pid.
func members(pid int) ([]proc, error) {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return nil, fmt.Errorf("read pid namespace of %d: %w", pid, err)
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	var out []proc
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", p)); err != nil || l != ns {
			continue
		}
		st, err := statusFields(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue
		}
		nspids := strings.Fields(st["NSpid"])
		nsPID := p
		if len(nspids) > 0 {
			nsPID, _ = strconv.Atoi(nspids[len(nspids)-1])
		}
		out = append(out, proc{pid: p, nsPID: nsPID, comm: st["Name"]})
	}
	return out, nil
}

// hostPID maps a pid of the init's namespace to the harness's.
func hostPID(initPID, nsPID int) (int, error) {
	ps, err := members(initPID)
	if err != nil {
		return 0, err
	}
	for _, p := range ps {
		if p.nsPID == nsPID {
			return p.pid, nil
		}
	}
	return 0, fmt.Errorf("no process %d in the namespace of %d", nsPID, initPID)
}

// statusFields reads a /proc status file as key → value.
func statusFields(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m, sc.Err()
}

// pssKB is the proportional set size of pid from smaps_rollup, in KiB.
func pssKB(pid int) (int, error) {
	m, err := statusFields(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, fmt.Errorf("read smaps_rollup of %d: %w", pid, err)
	}
	return kbField(m["Pss"])
}

// kbField parses "1234 kB".
func kbField(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
	if err != nil {
		return 0, fmt.Errorf("parse %q: %w", v, err)
	}
	return n, nil
}

// threads is the number of threads of pid.
func threads(pid int) (int, error) {
	m, err := statusFields(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(m["Threads"])
}

// wakeups is the sum of voluntary and involuntary context switches of all
// threads of pid: each is the thread leaving the CPU after having run, so
// an idle process's count does not move.
func wakeups(pid int) (int, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no tasks of %d", pid)
	}
	sum := 0
	for _, t := range tasks {
		m, err := statusFields(t)
		if err != nil {
			continue // a thread that just ended
		}
		v, _ := strconv.Atoi(m["voluntary_ctxt_switches"])
		n, _ := strconv.Atoi(m["nonvoluntary_ctxt_switches"])
		sum += v + n
	}
	return sum, nil
}
