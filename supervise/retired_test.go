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

// At most maxRetired retired logs drain at once; older ones are closed.
// A retired log lives while any process holds its pipe: before, a service
// that changed its own log settings at each run and left a process behind
// in a session of its own cost PID 1 a pipe, a log dir and a file per
// restart, for as long as those processes lived (the hermes user can
// edit its service.yaml and restart it at will).
func TestRetiredLogsAreBounded(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t)
	marks := t.TempDir()
	d := def("svc", "leave-fd", "0", filepath.Join(marks, "0"))
	d.Restart = config.RestartNever
	off := false
	d.Log = config.Log{Dir: dir, MaxSize: 1 << 20, Keep: 1, Console: &off}
	s := f.add(d, true)
	const runs = maxRetired + 4
	var pipes []string
	var orphans []int
	for i := range runs {
		waitState(t, s, StateExited)
		b, err := os.ReadFile(filepath.Join(marks, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		orphan, _ := strconv.Atoi(string(b))
		orphans = append(orphans, orphan)
		t.Cleanup(func() { syscall.Kill(orphan, syscall.SIGKILL) })
		p, err := os.Readlink("/proc/" + string(b) + "/fd/1")
		if err != nil || !strings.HasPrefix(p, "pipe:") {
			t.Fatalf("run %d: the orphan's stdout %q, %v; want the log pipe", i, p, err)
		}
		pipes = append(pipes, p)
		if i == runs-1 {
			break
		}
		nd := *d
		nd.Command = testprog.Command("leave-fd", "0", filepath.Join(marks, strconv.Itoa(i+1)))
		nd.Log.MaxSize = int64(1<<20 + i + 1) // a new log at the next start
		if err := s.Update(&nd); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = s.WaitFor(ctx, func(x Status) bool { return x.State != StateExited })
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	held := func() []bool {
		out := make([]bool, len(pipes))
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			target, _ := os.Readlink("/proc/self/fd/" + e.Name())
			if i := slices.Index(pipes, target); i >= 0 {
				out[i] = true
			}
		}
		return out
	}
	// The current log and the maxRetired newest retired ones are read.
	want := make([]bool, runs)
	for i := runs - 1 - maxRetired; i < runs; i++ {
		want[i] = true
	}
	testprog.WaitFor(t, 5*time.Second, "the oldest retired logs closed", func() bool { return slices.Equal(held(), want) })
	for _, pid := range orphans {
		syscall.Kill(pid, syscall.SIGKILL) // the logs they hold end at once
	}
	f.group.Remove("svc", true)
	<-s.Done()
}
