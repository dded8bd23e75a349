package supervise

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"hinit/config"
	"hinit/internal/testprog"
)

// finishScript is a finish program that appends its arguments to out and
// exits 125 after an exit 78, as hermes' finish does.
func finishScript(out string) *config.Finish {
	return &config.Finish{Command: []string{"/bin/sh", "-c",
		`echo "$@" >>` + out + `; [ "$1" = 78 ] && exit 125; exit 0`, "finish"}, Timeout: 5 * time.Second}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, _ := os.ReadFile(p)
	return string(b)
}

// After an exit 78 the finish program gets "78 0 gw" (s6's exit code,
// signal and service name) and its exit 125 keeps the service down; a
// start brings it back.
func TestFinishExit125StaysDown(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "finish")
	d := def("gw", "exit", "78")
	d.Finish = finishScript(out)
	s := f.add(d, true)
	st := waitState(t, s, StateExited)
	if st.Want != "down" || st.LastExit == nil || st.LastExit.Code != 78 || st.PID != 0 {
		t.Errorf("after exit 78 and finish 125: %+v, want exited, want down, last exit 78", st)
	}
	if got := readFile(t, out); got != "78 0 gw\n" {
		t.Errorf("finish arguments %q, want \"78 0 gw\"", got)
	}
	if st.Restarts != 0 {
		t.Errorf("restarted %d times, want none", st.Restarts)
	}
}

// finish runs where the service's command ran: with no workdir, its user's
// home, not hinit's own working dir (a finish's `rm -f ./app.lock` must
// reach the service's file).
func TestFinishRunsWhereTheServiceRan(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	d := def("gw", "exit", "78")
	d.Command = []string{"/bin/sh", "-c", "pwd >" + filepath.Join(dir, "run") + "; exit 78"}
	d.Finish = &config.Finish{Command: []string{"/bin/sh", "-c", "pwd >" + filepath.Join(dir, "finish") + "; exit 125"}, Timeout: 5 * time.Second}
	waitState(t, f.add(d, true), StateExited)
	run, fin := readFile(t, filepath.Join(dir, "run")), readFile(t, filepath.Join(dir, "finish"))
	if wd, _ := os.Getwd(); run == "" || run != fin || run == wd+"\n" {
		t.Errorf("the service ran in %q, its finish in %q (hinit's own dir %q): want one dir, not hinit's", run, fin, wd)
	}
}

// A process killed by a signal gives finish "256 N NAME"; finish exiting 0
// lets the restart policy restart it.
func TestFinishAfterSignalRestarts(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "finish")
	d := def("gw", "sleep", "inf")
	d.Finish = finishScript(out)
	s := f.add(d, true)
	first := waitState(t, s, StateUp)
	syscall.Kill(first.PID, syscall.SIGKILL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.WaitFor(ctx, func(st Status) bool { return st.State == StateUp && st.PID != first.PID }); err != nil {
		t.Fatalf("not restarted after finish: %v (%+v)", err, s.Status())
	}
	if got := readFile(t, out); got != "256 9 gw\n" {
		t.Errorf("finish arguments %q, want \"256 9 gw\"", got)
	}
}

// A finish that outlives its timeout is killed and the exit settles.
func TestFinishTimeout(t *testing.T) {
	f := newFixture(t)
	d := def("gw", "exit", "3")
	d.Restart = config.RestartNever
	d.Finish = &config.Finish{Command: []string{"/bin/sh", "-c", "exec sleep 60"}, Timeout: 100 * time.Millisecond}
	s := f.add(d, true)
	if st := waitState(t, s, StateStopping); st.PID != 0 || st.Reason != "finish running" {
		t.Errorf("while finish runs: %+v, want stopping without a pid", st)
	}
	start := time.Now()
	waitState(t, s, StateExited)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("finish killed after %v, want about 100ms", d)
	}
}

// The container's shutdown deadline ends a finish program as it ends a
// process: one that starts after the shutdown's stop, and one already
// running when the shutdown begins. Before, each ran its own timeout-finish
// (30 s here), past the deadline, while Group.Shutdown waited for it.
func TestFinishEndsByShutdownDeadline(t *testing.T) {
	for _, running := range []bool{false, true} {
		t.Run(map[bool]string{false: "finish after the stop", true: "finish already running"}[running], func(t *testing.T) {
			f := newFixture(t)
			d := def("svc", "sleep", "inf")
			if running {
				d = def("svc", "exit", "3")
				d.Restart = config.RestartNever
			}
			d.Finish = &config.Finish{Command: []string{"/bin/sh", "-c", "exec sleep 60"}, Timeout: 30 * time.Second}
			s := f.add(d, true)
			if running {
				waitState(t, s, StateStopping)
			} else {
				waitState(t, s, StateUp)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			f.group.Shutdown(ctx, start.Add(300*time.Millisecond))
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("Shutdown with a 300ms deadline took %v; status %+v", took, s.Status())
			}
			if st := s.Status(); st.State == StateStopping {
				t.Errorf("after Shutdown: %+v, want the finish program ended", st)
			}
		})
	}
}

// Once (s6-svc -O) leaves the running process alone and keeps the service
// down when it ends; StartOnce (-o) runs a down service once.
func TestOnce(t *testing.T) {
	f := newFixture(t)
	s := f.add(def("gw", "sleep", "inf"), true)
	st := waitState(t, s, StateUp)
	if err := s.Once(); err != nil {
		t.Fatal(err)
	}
	if now := s.Status(); now.PID != st.PID || now.Want != "down" {
		t.Errorf("after Once: %+v, want the same process, want down", now)
	}
	syscall.Kill(st.PID, syscall.SIGTERM)
	if st := waitState(t, s, StateDown); st.Restarts != 0 {
		t.Errorf("restarted after Once: %+v", st)
	}
	if err := s.StartOnce(); err != nil {
		t.Fatal(err)
	}
	st = s.Status()
	if !st.Running() || st.Want != "down" {
		t.Fatalf("after StartOnce: %+v, want running, want down", st)
	}
	syscall.Kill(st.PID, syscall.SIGKILL)
	waitState(t, s, StateDown)
}

// The logger of a service reads its stdout through a pipe hinit holds: a
// logger killed and restarted meanwhile loses no line, and removing the
// service removes its logger after it read everything.
func TestLoggerPipeLosesNoLine(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "log")
	d := def("w", "sleep", "inf")
	d.Command = []string{"/bin/sh", "-c", `i=0; while [ $i -lt 300 ]; do echo $i; i=$((i+1)); sleep 0.002; done; exec sleep 60`}
	d.Logger = def("w/log", "sleep", "inf")
	d.Logger.Command = []string{"/bin/sh", "-c", "exec cat >>" + out}
	s := f.add(d, true)
	logger := f.group.Get("w/log")
	if logger == nil {
		t.Fatal("no logger service w/log")
	}
	first := waitState(t, logger, StateUp)
	testprog.WaitFor(t, 10*time.Second, "some lines logged", func() bool { return strings.Count(readFile(t, out), "\n") > 20 })
	syscall.Kill(first.PID, syscall.SIGKILL)
	testprog.WaitFor(t, 10*time.Second, "every line logged", func() bool { return strings.Count(readFile(t, out), "\n") >= 300 })
	lines := strings.Split(strings.TrimSpace(readFile(t, out)), "\n")
	for i, l := range lines {
		if l != strconv.Itoa(i) {
			t.Fatalf("line %d is %q: a line was lost or doubled across the logger's restart", i, l)
		}
	}
	f.group.Remove("w", true)
	select {
	case <-logger.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("logger not removed with its service: %+v", logger.Status())
	}
	if f.group.Get("w/log") != nil || s.Status().Running() {
		t.Error("service or logger still there after Remove")
	}
}

// Removing a service while its finish program hangs still ends: the finish
// timeout keeps running and the removal completes after it.
func TestRemoveDuringFinish(t *testing.T) {
	f := newFixture(t)
	d := def("gw", "exit", "3")
	d.Finish = &config.Finish{Command: []string{"/bin/sh", "-c", "exec sleep 60"}, Timeout: 300 * time.Millisecond}
	s := f.add(d, true)
	waitState(t, s, StateStopping)
	s.Once()
	f.group.Remove("gw", true)
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("removal hangs behind a finish program past its timeout: %+v", s.Status())
	}
}

// A start for one run (s6-svc -o) sent while finish runs starts the
// service once finish has ended, and not again after that run.
func TestStartOnceDuringFinish(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	fifo, mark, runs := filepath.Join(dir, "fifo"), filepath.Join(dir, "mark"), filepath.Join(dir, "runs")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	d := def("gw", "sleep", "inf")
	d.Command = []string{"/bin/sh", "-c", "echo run >>" + runs + "; exec sleep 1000"}
	d.Finish = &config.Finish{Command: []string{"/bin/sh", "-c",
		`[ -e "$0" ] || { : >"$0"; read x <"$1"; }; exit 0`, mark, fifo}, Timeout: 10 * time.Second}
	s := f.add(d, true)
	testprog.WaitFor(t, 10*time.Second, "the first run", func() bool { return readFile(t, runs) == "run\n" })
	if err := s.Stop(true); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 10*time.Second, "finish running", func() bool { return s.Status().Reason == "finish running" })
	if err := s.StartOnce(); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // finish reads it: it ends when closed
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	testprog.WaitFor(t, 10*time.Second, "the one run", func() bool { return readFile(t, runs) == "run\nrun\n" })
	// The run's process may write before the runner has published it up.
	testprog.WaitFor(t, 10*time.Second, "the one run up, want down", func() bool {
		st := s.Status()
		return st.State == StateUp && st.Want == "down"
	})
	st := s.Status()
	syscall.Kill(st.PID, syscall.SIGKILL)
	if end := waitState(t, s, StateDown); end.PID != 0 || end.Restarts != st.Restarts {
		t.Errorf("after the one run: %+v, want down and not restarted", end)
	}
}

// At shutdown a service's logger is stopped after the service is gone, so
// what the service writes while it stops (its last line on TERM) is logged.
func TestShutdownLogsLastLine(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "current")
	d := def("w", "trap-term")
	d.Logger = def("w/log", "sleep", "inf")
	d.Logger.Command = []string{"/bin/sh", "-c", "exec cat >>" + out}
	f.add(d, true)
	testprog.WaitFor(t, 10*time.Second, "ready logged", func() bool { return readFile(t, out) == "ready\n" })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.group.Shutdown(ctx, time.Now().Add(5*time.Second))
	if got := readFile(t, out); got != "ready\nbye\n" {
		t.Fatalf("the logger's file after shutdown is %q, want \"ready\\nbye\\n\"", got)
	}
	for _, name := range []string{"w", "w/log"} {
		if st := f.group.Get(name).Status(); st.Running() {
			t.Errorf("%s still runs after shutdown: %+v", name, st)
		}
	}
}

// A start that comes while the finish program runs begins a new streak
// of failures, as a start at any other time does: FailingSince, which hsvc
// check reads, is the first exit after it. Before, the streak before the
// start was kept, and hsvc check could fail a gateway the user had just
// started.
func TestStartDuringFinishBeginsANewStreak(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	fifo, runs := filepath.Join(dir, "fifo"), filepath.Join(dir, "runs")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	d := def("s6", "exit", "1")
	d.Backoff = config.Backoff{Initial: 100 * time.Millisecond, Max: 100 * time.Millisecond, ResetAfter: time.Minute}
	// The second finish, the first after a streak began, waits for the
	// test; the others end at once.
	d.Finish = &config.Finish{Command: []string{"/bin/sh", "-c",
		`echo >> "$1"; [ "$(wc -l < "$1")" -ne 2 ] || read x < "$2"`, "finish", runs, fifo}, Timeout: 30 * time.Second}
	s := f.add(d, true)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	old, err := s.WaitFor(ctx, func(st Status) bool { return st.Reason == "finish running" && !st.FailingSince.IsZero() })
	if err != nil {
		t.Fatalf("%v (%+v)", err, s.Status())
	}
	started := time.Now()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fifo, []byte("go\n"), 0o600); err != nil { // that finish ends
		t.Fatal(err)
	}
	st, err := s.WaitFor(ctx, func(st Status) bool {
		return st.LastExit != nil && st.LastExit.At.After(started) && !st.FailingSince.IsZero()
	})
	if err != nil {
		t.Fatalf("%v (%+v)", err, s.Status())
	}
	if st.FailingSince.Before(started) {
		t.Errorf("FailingSince %s after the start at %s, want an exit after it (the old streak began %s)",
			st.FailingSince.Format("15:04:05.000"), started.Format("15:04:05.000"), old.FailingSince.Format("15:04:05.000"))
	}
}
