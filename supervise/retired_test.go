package supervise

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"hinit/config"
	"hinit/internal/testprog"
)

// When the log settings change, the old log is given to no new instance:
// it finishes once its last instance is gone, writing that instance's
// unterminated last line at once, and leaves no descriptor behind. Before,
// hinit kept the old pipe's write end until the service was removed: the
// line waited until then (and a rotation of the new log could prune it),
// and every change kept two descriptors and a goroutine in PID 1.
func TestRetiredLogFinishes(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t)
	d := def("svc", "sleep", "inf")
	marks := t.TempDir()
	// "$$$$" is the shell's "$$" once hinit.yaml's expansion has run.
	d.Command = []string{"/bin/sh", "-c", `printf "last words of $$$$"; : > ` + marks + `/$$$$; exec sleep 100000`}
	off := false
	d.Log = config.Log{Dir: dir, MaxSize: 1 << 20, Keep: 1, Console: &off}
	s := f.add(d, true)
	st := waitState(t, s, StateUp)
	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	before := fds()
	var killed []int
	for i := range 20 {
		nd := *d
		nd.Log.MaxSize = int64(1<<20 + i + 1) // a new log at the next start
		if err := s.Update(&nd); err != nil {
			t.Fatal(err)
		}
		pid := strconv.Itoa(st.PID)
		testprog.WaitFor(t, 10*time.Second, "instance "+pid+" printing", func() bool {
			_, err := os.Stat(filepath.Join(marks, pid))
			return err == nil
		})
		killed = append(killed, st.PID)
		syscall.Kill(st.PID, syscall.SIGKILL)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		next, err := s.WaitFor(ctx, func(x Status) bool { return x.State == StateUp && x.PID != st.PID })
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		st = next
	}
	cur := filepath.Join(dir, "current")
	testprog.WaitFor(t, 10*time.Second, "every killed instance's last words in current", func() bool {
		b, _ := os.ReadFile(cur)
		for _, pid := range killed {
			if !strings.Contains(string(b), "last words of "+strconv.Itoa(pid)) {
				return false
			}
		}
		return true
	})
	testprog.WaitFor(t, 10*time.Second, "the retired logs' descriptors closed", func() bool { return fds() <= before+2 })
	f.group.Remove("svc", true) // its logs closed before the temporary dirs go
	<-s.Done()
}

// An instance's last line without its newline is written when it exits,
// not when the service is removed, and each restart's partial line is a
// line of its own; a finish program's likewise. Before, the line of an
// exited service waited in memory until then (for a static service, the
// container's shutdown), and restarts glued their lines into one.
func TestLastLineWrittenAtExit(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t)
	d := def("svc", "sleep", "inf")
	marks := t.TempDir()
	// "$$" is "$" once hinit.yaml's expansion has run.
	d.Command = []string{"/bin/sh", "-c", `n=$$(ls ` + marks + ` | wc -l); : > ` + marks + `/$$$$; printf "partial $$n"; [ $$n -lt 2 ] || exit 78; exit 1`}
	d.Finish = &config.Finish{Command: []string{"/bin/sh", "-c", `printf "finish $0"`}} // finish commands are not expanded
	d.NoRestartExitCodes = []int{78}
	d.Backoff = config.Backoff{Initial: time.Millisecond, Max: time.Millisecond}
	off := false
	d.Log = config.Log{Dir: dir, MaxSize: 1 << 20, Keep: 1, Console: &off}
	s := f.add(d, true)
	waitState(t, s, StateExited)
	cur := filepath.Join(dir, "current")
	testprog.WaitFor(t, 10*time.Second, "six lines in current", func() bool {
		b, _ := os.ReadFile(cur)
		return strings.Count(string(b), "\n") == 6
	})
	b, _ := os.ReadFile(cur)
	var got []string
	for _, ln := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		_, text, _ := strings.Cut(ln, " ")
		got = append(got, text)
	}
	if want := []string{"partial 0", "finish 1", "partial 1", "finish 1", "partial 2", "finish 78"}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	f.group.Remove("svc", true)
	<-s.Done()
}
