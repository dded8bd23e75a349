package pid1

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// shutdown stops everything (SPEC §2 "Shutdown"): main and all services get
// their stop signal at once; whatever outlives its own stop.timeout or the
// deadline is killed with its process group; then, as PID 1, every other
// process left gets TERM and then KILL. Each wait ends the moment what it
// waits for is gone: there is no fixed sleep. Last, the services' logs are
// flushed and closed, by the deadline and half of shutdownMargin
// (supervise's flushGrace), whatever their outputs do; boot's last flush,
// hinit's own stderr, ends by h.exitBy, which the caller set with the
// deadline. A service whose goroutine is stuck in a step (a write to a
// hung volume) is given up on by then too, and named.
func (h *hinit) shutdown(deadline time.Time, mainSignalled bool) {
	// The stop gives up on a stuck service at half the margin, so that
	// the others, stopped meanwhile, still get the rest of it to flush and
	// close their logs before hinit must be gone.
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(shutdownMargin))
	defer cancel()
	stopCtx, cancelStop := context.WithDeadline(ctx, deadline.Add(shutdownMargin/2))
	defer cancelStop()
	var wg sync.WaitGroup
	wg.Go(func() { h.mgr.Shutdown(stopCtx, deadline) })
	wg.Go(func() { h.stopMain(deadline, mainSignalled) })
	wg.Wait()
	h.sweep(deadline)
	h.cancelSvcs()
	// The services' goroutines end only now, one with nothing left to do
	// (registered down, or stopped with its log flushed) at once. A sweep
	// that overran the margin (a process that outlived its SIGKILL: main,
	// without CAP_KILL) still leaves them that moment, as stderrWait does
	// hinit's stderr: the wait began with its time up, and named every
	// service, those registered down too, as stuck.
	waitCtx, cancelWait := context.WithTimeout(context.Background(),
		max(time.Until(deadline.Add(shutdownMargin)), stderrMinWait))
	defer cancelWait()
	if running := h.mgr.Wait(waitCtx); running != nil {
		why := "stuck in a step past the deadline (a hung volume?)"
		if h.lacksCapKill() {
			why = "stuck past the deadline: without CAP_KILL hinit cannot kill another user's processes (or a step hangs on a volume)"
		}
		h.log.Warn(fmt.Sprintf("not waiting any longer for %s: %s; what it had still to log may be lost", strings.Join(running, ", "), why))
		return
	}
	h.log.Info("shutdown complete")
}

// shutdownMargin is how long past HINIT_SHUTDOWN_TIMEOUT hinit may take to
// exit when its outputs stall (a stdout or stderr nobody reads, a hung
// disk): the services' logs get half of it for the last lines of what was
// killed at the deadline, hinit's own stderr the rest. docker stop's 10 s
// leave 2 s over the default 8 s timeout; this takes half of them.
const shutdownMargin = time.Second

// stderrWait is how long hinit waits at exit for its own lines to be
// written (errOut): a second, and after a shutdown no later than its
// exitBy, but at least stderrMinWait, so that a healthy stderr gets its
// last lines even after a shutdown that overran (a process that outlived
// SIGKILL).
func (h *hinit) stderrWait() time.Duration { return h.exitWait(time.Second) }

// exitWait is how long hinit may wait at exit for one more of its outputs
// to be written: limit, and after a shutdown no later than its exitBy, but
// at least stderrMinWait.
func (h *hinit) exitWait(limit time.Duration) time.Duration {
	if h.exitBy.IsZero() {
		return limit
	}
	return max(min(limit, time.Until(h.exitBy)), stderrMinWait)
}

// stderrMinWait is the least stderrWait gives.
const stderrMinWait = 100 * time.Millisecond

// stopMain sends main SIGTERM (unless it already got the signal that began
// the shutdown) and kills its process group at the deadline. When even
// that fails (a root hinit without CAP_KILL, main another user's), PID 1
// stops waiting for main: its own exit kills the namespace, main with it,
// and it exits 137. Waiting on kept hinit up until docker's or the
// kubelet's own SIGKILL, whatever their grace period.
func (h *hinit) stopMain(deadline time.Time, signalled bool) {
	select {
	case <-h.mainGone:
		return
	default:
	}
	if !signalled {
		syscall.Kill(h.opts.signalTarget(h.main.pid), syscall.SIGTERM)
		syscall.Kill(-h.main.pid, syscall.SIGCONT) // as resumeMain
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-h.mainGone:
	case <-t.C:
		h.log.Warn("main outlived the shutdown timeout: killing its process group", "pid", h.main.pid)
		// Main itself too: it may have joined another group (setpgid),
		// leaving its own empty or to a child, and hinit waited for it
		// for ever. It is not reaped before mainGone: the pid is main's.
		h.main.killed.Store(true)
		err := syscall.Kill(-h.main.pid, syscall.SIGKILL)
		if perr := syscall.Kill(h.main.pid, syscall.SIGKILL); err == nil || err == syscall.ESRCH {
			err = perr
		}
		if err != nil && err != syscall.ESRCH && h.isPID1 {
			h.logToStderrAgain() // main ends with hinit: why must reach the user, as after main
			h.log.Error("cannot kill main: it ends with hinit", "pid", h.main.pid, "err", err)
			return
		}
		<-h.mainGone
	}
}

// sweep gets rid of every process left once main and the services are
// down: TERM (and CONT, so that a stopped one runs its handler: a job main
// left stopped, or one stopped by its read of the terminal hinit took back,
// held the exit until the deadline), then KILL at the deadline. As PID 1
// that is every process of the namespace; as a subreaper, every
// descendant.
func (h *hinit) sweep(deadline time.Time) {
	if !h.signalRest(syscall.SIGTERM) {
		return
	}
	h.signalRest(syscall.SIGCONT)
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-h.reaper.Idle():
		return
	case <-t.C:
	}
	h.log.Warn("processes left after the shutdown timeout: killing them")
	h.signalRest(syscall.SIGKILL)
	// As a subreaper the list of descendants is read from /proc before
	// each kill: a process that forks meanwhile leaves children nobody
	// signalled. Kill again until none is left.
	again := time.NewTicker(20 * time.Millisecond)
	defer again.Stop()
	giveUp := time.NewTimer(2 * time.Second)
	defer giveUp.Stop()
	for {
		select {
		case <-h.reaper.Idle():
			return
		case <-again.C:
			h.signalRest(syscall.SIGKILL)
		case <-giveUp.C:
			why := ""
			if h.lacksCapKill() && h.isPID1 { // as a subreaper they outlive it
				why = ": without CAP_KILL hinit cannot kill another user's processes; they end with hinit"
			}
			h.log.Error("processes left after SIGKILL" + why)
			return
		}
	}
}

// lacksCapKill reports whether hinit runs as root without CAP_KILL: its
// signals to another user's processes fail (kill(-1) says nothing of it).
func (h *hinit) lacksCapKill() bool {
	missing, _ := missingCaps()
	return h.root && slices.Contains(missing, "KILL")
}

// signalRest sends sig to every process left and reports whether there
// was any.
func (h *hinit) signalRest(sig syscall.Signal) bool {
	select {
	case <-h.reaper.Idle():
		return false
	default:
	}
	if h.isPID1 {
		return syscall.Kill(-1, sig) == nil
	}
	pids := descendants(os.Getpid())
	for _, pid := range pids {
		syscall.Kill(pid, sig)
	}
	return len(pids) > 0
}

// descendants lists the processes below pid, read from /proc.
func descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := make(map[int][]int)
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := parentOf(p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}

// parentOf reads the parent pid from /proc/<pid>/stat (field 4, after the
// parenthesised command name, which may itself hold spaces and parens).
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}
