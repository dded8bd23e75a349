package supervise

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	"hinit/cgroup"
	"hinit/config"
	"hinit/reaper"
	"hinit/signame"
)

// exited handles the end of the running instance. When it had its stop
// signal and left processes in its group (the program a shell string ran,
// the workers of a master), those get the stop signal too, and the rest of
// the stop timeout before the group's SIGKILL (timerKill, still armed): the
// instance is done once its group is empty. They got the SIGKILL at once,
// so a shell string's program never saw its stop signal.
func (r *runner) exited(st reaper.Status) {
	p := r.proc
	if r.state == StateStopping && !p.lingering && groupAlive(p.pid) {
		sig := stopSignal(p.def)
		signalGroup(p.pid, sig)
		signalGroup(p.pid, syscall.SIGCONT)
		p.lingering = true
		until := time.Now().Add(p.def.Stop.Timeout)
		if r.timerFor == timerKill {
			until = r.timerAt
		}
		p.done = lingerUntilEmpty(p.pid, st, until.Add(lingerAfterKill))
		// Its exit is known now: status shows it while the group ends
		// (the final delivery, the same st, records it again).
		r.lastExit = r.exitOf(p, st)
		r.set(StateStopping, "exited; what it left in its process group got "+signame.Text(sig))
		return
	}
	r.proc = nil
	p.cancel()
	signalGroup(p.pid, syscall.SIGKILL) // whatever it left in its process group
	p.log.EndLine()                     // its last line is its own, written now
	r.stopTimer()
	r.lastExit = r.exitOf(p, st)
	if r.lastExit.OOM || r.lastExit.PidsLimit {
		r.deps.Log.Warn("exited: "+describeExit(r.lastExit), "svc", r.name, "pid", p.pid, "code", st.ExitStatus())
	} else {
		r.deps.Log.Info("exited", "svc", r.name, "pid", p.pid, "code", st.ExitStatus())
	}
	if ranLong(p.def.Backoff, st.At.Sub(p.started)) {
		// A long run ends a streak of failures, however it ended: by
		// a restart_now code, a restart signal or a no_restart code too.
		r.failures, r.failing = 0, time.Time{}
	}
	// A restart asked by a signal ends as a stop for a restart does:
	// started again at once (settle), not counted as a failure.
	stopping := r.state == StateStopping || p.askedRestart(st.At)
	if r.startFinish(p, st, stopping) {
		return // settle runs once the finish program has ended
	}
	r.settle(p, false, stopping)
}

// exitOf is how p's run ended, st its status: a SIGKILL hinit did not
// send is put down to the OOM killer when the container's cgroup counted
// an OOM kill since p started; any other failure, to the pids limit when
// it refused a new process or thread meanwhile, unless hinit ended the
// run (a stop, a restart asked by a signal: its status answers the
// signal).
func (r *runner) exitOf(p *instance, st reaper.Status) *Exit {
	ex := &Exit{Code: st.Code, Signal: st.Signal, At: st.At, OOM: p.mark.OOMKilled(st.Signal, p.killed)}
	endedByHinit := p.killed || r.state == StateStopping || p.askedRestart(st.At)
	ex.PidsLimit = !ex.OOM && p.mark.PidsLimited(st.Code, st.Signal, endedByHinit)
	return ex
}

// lingerPoll is how often the process group a stopping service's process
// left is looked at: the kernel tells of a child's exit, not of a group's
// end, and the group's processes may be anyone's children. A stop only:
// nothing polls while services run.
const lingerPoll = 20 * time.Millisecond

// lingerAfterKill bounds the wait past the group's SIGKILL: a zombie whose
// parent never reaps it stays in the group for good.
const lingerAfterKill = time.Second

// groupAlive reports whether a process is left in the group pgid.
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}

// lingerUntilEmpty delivers st once no process is left in the group pgid,
// or at until.
func lingerUntilEmpty(pgid int, st reaper.Status, until time.Time) <-chan reaper.Status {
	done := make(chan reaper.Status, 1)
	go func() {
		t := time.NewTicker(lingerPoll)
		defer t.Stop()
		for groupAlive(pgid) && time.Now().Before(until) {
			<-t.C
		}
		done <- st
	}()
	return done
}

// settle applies what follows an exit, after the finish program if any:
// down when stopped or asked to stay down (stayDown), else the restart
// policy. asked says what comes next was asked for, not the policy's to
// decide: the exit followed a stop signal, or a start or restart came
// while the finish program ran (handleFinishing).
func (r *runner) settle(p *instance, stayDown, asked bool) {
	if stayDown {
		r.want = false
		r.set(StateExited, fmt.Sprintf("%s; finish exited %d: staying down", describeExit(r.lastExit), config.FinishStayDown))
		return
	}
	if asked || !r.want {
		if r.want && !r.removing { // restart: start again at once
			r.restarts++
			r.spawn()
			return
		}
		r.set(StateDown, "stopped")
		return
	}
	r.afterExit(p.def, r.lastExit.At.Sub(p.started), "", false)
}

// afterExit applies the restart policy after a run of length ran ended
// with r.lastExit. why describes a failure to start. viaTimer forces the
// restart through the timer, so a command that cannot start never makes
// spawn recurse.
func (r *runner) afterExit(def *config.Service, ran time.Duration, why string, viaTimer bool) {
	ex := r.lastExit
	desc := describeExit(ex)
	if why != "" {
		desc = why
	}
	if !viaTimer && r.restartNow(def, ex, ran, desc) {
		return
	}
	if !r.want {
		// A run once (s6-svc -o) whose start failed: that was its run, and
		// it ends as settle ends one that started, down; the reason says
		// why it could not start (hsvc start --once --wait answers it).
		r.set(StateDown, desc)
		return
	}
	if !restartable(def, ex) {
		if ex.Failed() {
			r.essentialFailed(ex)
			r.failingFrom(ex.At)
		}
		r.set(StateExited, desc)
		return
	}
	if !ranLong(def.Backoff, ran) { // a long one ended the streak (exited)
		r.failures++
		r.failingFrom(ex.At)
	}
	now := time.Now()
	var gave bool
	if gave, r.starts = gaveUp(def.GiveUp, append(r.starts, now), now); gave {
		r.starts = nil
		r.deps.Log.Error("gave up", "svc", r.name, "reason", desc)
		r.essentialFailed(ex)
		r.set(StateFailed, fmt.Sprintf("gave up after %d restarts within %v; last: %s",
			def.GiveUp.Restarts, def.GiveUp.Within, desc))
		return
	}
	r.restarts++
	delay := restartDelay(def.Backoff, ran, r.failures)
	if delay == 0 && !viaTimer {
		r.spawn()
		return
	}
	r.arm(timerRestart, delay)
	r.deps.Log.Info("backing off", "svc", r.name, "delay", delay.Round(time.Millisecond))
	r.set(StateBackoff, fmt.Sprintf("%s; restarting in %v", desc, delay.Round(time.Millisecond)))
}

// restartNow restarts at once after an exit code of
// restart_now_exit_codes: the program asked for a new process (hermes' 75
// after a graceful restart), which is neither a quick failure nor a step
// towards give_up. Only a run shorter than backoff.initial waits that long
// first, so a program that asks for a restart before doing anything cannot
// spin. The codes say how soon, not whether: a policy that does not
// restart after ex (restart: never, say a gateway's own override of the
// template's [75]) is not overruled. It reports whether it handled the exit.
func (r *runner) restartNow(def *config.Service, ex *Exit, ran time.Duration, desc string) bool {
	if ex.Signal != 0 || !slices.Contains(def.RestartNowExitCodes, ex.Code) || !restartable(def, ex) {
		return false
	}
	r.restarts++
	if ran < def.Backoff.Initial {
		r.arm(timerRestart, def.Backoff.Initial)
		r.set(StateBackoff, fmt.Sprintf("%s (restart requested) after %v; restarting in %v",
			desc, ran.Round(time.Millisecond), def.Backoff.Initial))
		return true
	}
	r.deps.Log.Info("restart requested", "svc", r.name, "code", ex.Code)
	r.spawn()
	return true
}

// failingFrom starts a streak of failures at t unless one is on.
func (r *runner) failingFrom(t time.Time) {
	if t.IsZero() {
		t = time.Now()
	}
	if r.failing.IsZero() {
		r.failing = t
	}
}

// restartable says whether the policy restarts after ex.
func restartable(def *config.Service, ex *Exit) bool {
	switch {
	case def.Restart == config.RestartNever:
		return false
	case ex.Signal == 0 && slices.Contains(def.NoRestartExitCodes, ex.Code):
		return false
	case def.Restart == config.RestartOnFailure && ex.Signal == 0 && ex.Code == 0:
		return false
	}
	return true
}

func (r *runner) essentialFailed(ex *Exit) {
	if !r.def.Essential || r.deps.Failed == nil {
		return
	}
	r.deps.Failed(r.name, ex.Status())
}

// describeExit says how a run ended: "exit 3", "killed by SIGKILL",
// "killed by SIGKILL, out of memory (...)" or "exit 2, the container's
// pids limit refused ...".
func describeExit(ex *Exit) string {
	s := fmt.Sprintf("exit %d", ex.Code)
	if ex.Signal != 0 {
		s = "killed by " + signame.Text(ex.Signal)
	}
	switch {
	case ex.OOM:
		s += ", " + cgroup.OOMReason
	case ex.PidsLimit:
		s += ", " + cgroup.PidsReason
	}
	return s
}

// restartWindowFloor is the least time after a restart signal in which an
// exit is the restart asked: a stop timeout may be tiny (an s6 dir's
// timeout-kill is in ms), and nothing kills a process after a restart
// signal. A variable for tests only.
var restartWindowFloor = 10 * time.Second

// askedRestart reports whether an exit at t ends a restart asked by a
// signal: within the stop timeout of the signal (the time a stop gives),
// and at least restartWindowFloor.
func (p *instance) askedRestart(t time.Time) bool {
	return !p.restartAsked.IsZero() && t.Sub(p.restartAsked) <= max(p.def.Stop.Timeout, restartWindowFloor)
}
