package docker

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOrphansReaped: processes orphaned inside the container (their parent,
// a docker exec shell, is gone) are adopted by hinit as PID 1 and reaped
// when they end: none stays a zombie.
func TestOrphansReaped(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "sleep", "infinity")
	c.booted()
	out := c.sh("hermes", `for i in 1 2 3 4 5 6 7 8; do sleep 1 & echo $!; done`)
	pids := strings.Fields(out)
	if len(pids) != 8 {
		t.Fatalf("orphans: got pids %q", out)
	}
	for _, pid := range pids {
		st := c.exec("root", "cat", "/proc/"+pid+"/status")
		if st.code == 0 && !strings.Contains(st.stdout, "\nPPid:\t1\n") {
			t.Errorf("orphan %s not adopted by PID 1:\n%s", pid, st.stdout)
		}
	}
	for _, pid := range pids {
		waitFor(t, fmt.Sprintf("orphan %s to be reaped", pid), 15*time.Second, func() bool {
			return !c.exists("/proc/" + pid)
		})
	}
	if ps := c.sh("root", "ps -o stat,pid,args"); zombies(ps) != "" {
		t.Errorf("zombies left:\n%s", ps)
	}
}

// zombies returns the lines of ps -o stat,pid,args that show a zombie.
func zombies(ps string) string {
	var z []string
	for _, l := range strings.Split(ps, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Z") {
			z = append(z, l)
		}
	}
	return strings.Join(z, "\n")
}
