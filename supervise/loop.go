package supervise

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"hinit/config"
	"hinit/errcap"
	"hinit/reaper"
	"hinit/signame"
	"hinit/svclog"
)

// runner is the state of one service, owned by its goroutine alone.
type runner struct {
	*Service
	deps *Deps
	def  *config.Service // as registered; expanded at each start

	want     bool // up
	state    State
	reason   string
	since    time.Time
	proc     *instance // the running process, or nil
	failures int       // consecutive quick failures
	failing  time.Time // when the current streak of failures began (Status.FailingSince)
	starts   []time.Time
	restarts int
	lastExit *Exit
	removing bool
	fin      *finishRun // the finish program running after an exit, or nil
	// onceAfterFinish: a start for one run (-o) came while fin ran;
	// startAfterFinish: a start or restart did (handleFinishing).
	onceAfterFinish  bool
	startAfterFinish bool
	final            bool      // stopped for the container's shutdown: never starts again
	finalBy          time.Time // that shutdown's deadline, which ends a finish program too

	timer    *time.Timer
	timerFor timerKind
	timerAt  time.Time // when timer fires

	io stdio // pipe ends to a logger service, held for every run

	log     *svclog.Log
	logKey  string // the options log was opened with
	retired []*svclog.Log
}

type timerKind int

const (
	timerNone    timerKind = iota
	timerRestart           // backoff elapsed: start again
	timerKill              // stop timeout elapsed: SIGKILL the process group
	timerFinish            // the finish program's timeout elapsed: SIGKILL it
)

// newStreak forgets the failures so far, on a user's start or restart:
// the give_up count, the start times it weighs and FailingSince (which
// hsvc check reads) begin again from the next exit.
func (r *runner) newStreak() {
	r.failures, r.starts, r.failing = 0, nil, time.Time{}
}

// begin puts the service in its first state: spawned when up, else down.
// It runs before loop, in the goroutine that adds the service; the go
// statement that starts loop hands the runner over.
func (r *runner) begin(up bool) {
	r.state, r.since = StateDown, time.Now()
	if up {
		r.want = true
		r.spawn()
	} else {
		r.set(StateDown, "registered down")
	}
}

// loop is the service's goroutine: the only one touching the runner from
// begin's return until the service is removed or ctx ends.
func (r *runner) loop(ctx context.Context) {
	defer close(r.done)
	defer r.io.close()
	for !(r.removing && r.proc == nil && r.fin == nil) {
		if r.final && r.proc == nil && r.fin == nil {
			r.io.closeOut() // stopped for good: its logger may read to the end
		}
		// exited is the running process's or the finish program's: never
		// both, finish runs after the exit. One case, not two, keeps this
		// frame small enough that a parked loop fits the 2 KB a goroutine
		// starts with (a sixth case cost 2 KB a service).
		var exited <-chan reaper.Status
		var ready <-chan struct{}
		var fired <-chan time.Time
		if r.proc != nil {
			exited = r.proc.done
			if r.state == StateStarting {
				ready = r.proc.ready
			}
		}
		if r.timer != nil {
			fired = r.timer.C
		}
		if r.fin != nil {
			exited = r.fin.done
		}
		select {
		case c := <-r.cmds:
			c.reply <- r.handle(c)
		case st := <-exited:
			if r.fin != nil {
				r.finished(st)
			} else {
				r.exited(st)
			}
		case <-ready:
			r.set(StateUp, "")
		case <-fired:
			r.timerFired()
		case <-ctx.Done():
			r.closeLogs()
			return
		}
	}
	r.closeLogs()
}

func (r *runner) handle(c command) error {
	if r.final && (c.op == opStart || c.op == opRestart || c.op == opStartOnce) {
		return ErrShuttingDown
	}
	if r.fin != nil && c.op != opSignal && c.op != opUpdate && c.op != opRemove {
		return r.handleFinishing(c) // the finish program decides first
	}
	switch c.op {
	case opOnce, opStartOnce:
		r.handleOnce(c.op)
	case opStart:
		r.want = true
		r.newStreak()
		if r.proc == nil {
			r.stopTimer()
			r.spawn()
			return nil
		}
		r.set(r.state, r.reason) // stopping: it starts again once it has exited
	case opStop:
		r.markFinal(c)
		return r.stop(c.requested, c.deadline)
	case opRestart:
		r.newStreak()
		if r.proc == nil {
			r.want = true
			r.stopTimer()
			r.spawn()
			return nil
		}
		// A finish program (an s6 dir: hermes' turns exit 0 into 125,
		// stay down) must not see the clean exit a planned-stop marker
		// causes: a restart is then what s6-svc -t is, a plain stop
		// signal, and the gateway's own exit code goes to finish.
		marker := c.requested && (r.proc.def.Finish == nil || len(r.proc.def.Finish.Command) == 0)
		if err := r.stop(marker, time.Time{}); err != nil {
			return err
		}
		r.want = true // start again as soon as it has exited
		r.set(r.state, r.reason)
	case opSignal:
		if r.proc == nil {
			return ErrNotRunning
		}
		if c.process && r.proc.lingering {
			// Its process is reaped: its pid may be anybody's by now.
			// What it left in its group is still there for the group.
			return ErrProcessEnded
		}
		send := signalGroup
		if c.process {
			send = signalProcess
		}
		if c.sig == StopSignal {
			c.sig = stopSignal(r.proc.def)
		}
		err := send(r.proc.pid, c.sig)
		if c.sig == syscall.SIGKILL && err == nil {
			r.proc.killed = true
		}
		if c.restart && err == nil {
			r.proc.restartAsked = time.Now()
		}
		return err
	case opUpdate:
		r.def = c.def
		r.set(r.state, r.reason)
	case opRemove:
		r.removing = true
		return r.stop(c.requested, time.Time{})
	}
	return nil
}

// stop moves the service towards down: the stop signal to a running
// process (SIGKILL to its group when the timeout or deadline comes), or
// straight to down when nothing runs. When the signal cannot be sent (a
// root hinit without CAP_KILL, a service of another user), the service
// stays as it is and the error says why, instead of "stopping" for ever.
func (r *runner) stop(requested bool, deadline time.Time) error {
	if r.proc == nil && r.fin != nil { // down once finish ends (its timer runs on)
		r.want = false
		r.set(r.state, r.reason)
		return nil
	}
	if r.proc == nil {
		r.want = false
		r.stopTimer()
		if r.state != StateDown {
			r.set(StateDown, "stopped")
		}
		return nil
	}
	timeout := r.proc.def.Stop.Timeout
	if !deadline.IsZero() {
		timeout = min(timeout, time.Until(deadline))
	}
	if r.state == StateStopping {
		r.want = false
		if r.timerFor == timerKill && !deadline.IsZero() && deadline.Before(r.timerAt) {
			r.arm(timerKill, time.Until(deadline)) // a shutdown may bring an ongoing stop's SIGKILL forward, never put it off
		}
		r.set(r.state, r.reason)
		return nil
	}
	if requested {
		r.writeMarker()
	}
	sig := stopSignal(r.proc.def)
	r.deps.Log.Debug("stopping", "svc", r.name, "pid", r.proc.pid, "signal", signame.Text(sig))
	if err := syscall.Kill(r.proc.pid, sig); err != nil && err != syscall.ESRCH {
		err = fmt.Errorf("send %s to pid %d: %w (hinit needs CAP_KILL to stop other users' processes)",
			signame.Text(sig), r.proc.pid, err)
		r.deps.Log.Error("cannot stop", "svc", r.name, "err", err)
		r.set(r.state, "cannot stop: "+err.Error())
		return err
	}
	// A process stopped (SIGSTOP, a paused service) keeps the stop signal
	// pending until the timeout's SIGKILL: SIGCONT after it, as s6,
	// systemd and hinit's own main get.
	signalGroup(r.proc.pid, syscall.SIGCONT)
	if sig == syscall.SIGKILL {
		r.proc.killed = true
	}
	r.want = false
	r.arm(timerKill, timeout)
	r.set(StateStopping, "sent "+signame.Text(sig))
	return nil
}

// writeMarker writes the gateway's planned-stop marker before a requested
// stop, so the gateway records "stopped" instead of "running".
func (r *runner) writeMarker() {
	path := r.proc.def.Stop.PlannedStopMarker
	if path == "" || r.deps.Marker == nil {
		return
	}
	if err := r.deps.Marker(path, r.proc.pid, r.proc.acct); err != nil {
		r.deps.Log.Warn("planned-stop marker not written", "svc", r.name, "path", path, "err", err)
	}
}

func (r *runner) timerFired() {
	kind := r.timerFor
	r.timer, r.timerFor = nil, timerNone
	switch kind {
	case timerRestart:
		r.spawn()
	case timerFinish:
		if r.fin != nil {
			r.deps.Log.Warn("finish timeout: killing it", "svc", r.name, "pid", r.fin.pid)
			signalGroup(r.fin.pid, syscall.SIGKILL)
		}
	case timerKill:
		if r.proc != nil {
			r.deps.Log.Warn("stop timeout: killing process group", "svc", r.name, "pid", r.proc.pid)
			r.proc.killed = true
			signalGroup(r.proc.pid, syscall.SIGKILL)
		}
	}
}

func (r *runner) arm(kind timerKind, d time.Duration) {
	r.stopTimer()
	r.timer, r.timerFor, r.timerAt = time.NewTimer(max(d, 0)), kind, time.Now().Add(max(d, 0))
}

func (r *runner) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer, r.timerFor = nil, timerNone
	}
}

// set enters state with reason and publishes the snapshot.
func (r *runner) set(state State, reason string) {
	if state != r.state {
		r.since = time.Now()
	}
	reason = errcap.Text(reason, errcap.Max) // a start error can quote 64 KiB of YAML
	r.state, r.reason = state, reason
	st := Status{Name: r.name, State: state, Reason: reason, Since: r.since, Source: r.def.Source}
	st.Want = wantWord(r.want)
	st.PID = 0
	if r.proc != nil {
		st.PID, st.UpSince = r.proc.pid, r.proc.started
	}
	st.Ready = state == StateUp
	st.Restarts = r.restarts
	st.LastExit = r.lastExit
	if r.log != nil {
		st.LogPath, st.LostLines = r.log.Path(), r.log.Lost()
		r.liveLog.Store(r.log)
	}
	st.Essential, st.Protected, st.LogDir = r.def.Essential, r.def.Protected, r.def.Log.Dir
	st.FailingSince = r.failing
	r.publish(st)
}

func signalProcess(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(pid, sig); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("signal %v to process %d: %w", sig, pid, err)
	}
	return nil
}

// StopSignal, given to SignalRestart, stands for the stop signal of the
// definition the process runs.
const StopSignal syscall.Signal = 0

// stopSignal is def's stop signal, SIGTERM when it names none.
func stopSignal(def *config.Service) syscall.Signal {
	if sig, _ := signame.Parse(def.Stop.Signal); sig != 0 {
		return sig
	}
	return syscall.SIGTERM
}

func signalGroup(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("signal %v to process group %d: %w", sig, pid, err)
	}
	return nil
}
