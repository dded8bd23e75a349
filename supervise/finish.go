package supervise

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"hinit/config"
	"hinit/reaper"
	"hinit/svclog"
)

// defaultFinishTimeout bounds a finish program whose definition gives no
// timeout (s6's default timeout-finish).
const defaultFinishTimeout = 5 * time.Second

// finishRun is a finish program running after an exit of the service's
// process (an s6 servicedir's finish script).
type finishRun struct {
	pid      int
	inst     *instance // the run it follows
	stopping bool      // that run ended after a stop signal
	done     <-chan reaper.Status
	log      *svclog.Log // its stdout and stderr; nil: /dev/null
}

// startFinish starts the finish program of the run p that ended with st,
// with s6's arguments: the exit code (256 when killed by a signal), the
// signal number and the service's name (its dir's name in the scandir, as
// s6-supervise passes it). It reports false when there is none or it
// cannot start: then the exit is settled at once.
func (r *runner) startFinish(p *instance, st reaper.Status, stopping bool) bool {
	f := p.def.Finish
	if f == nil || len(f.Command) == 0 {
		return false
	}
	code, sig := st.Code, int(st.Signal)
	if sig != 0 {
		code = 256
	}
	argv := append(append([]string(nil), f.Command...), strconv.Itoa(code), strconv.Itoa(sig), r.name)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		r.deps.Log.Error("cannot run finish", "svc", r.name, "err", err)
		return false
	}
	defer devnull.Close()
	out := devnull
	if r.log != nil {
		out = r.log.Writer()
	}
	files := r.io.files(devnull, out)
	prog := r.program(p.def, p.acct, argv, r.deps.Environ())
	prog.Files = files
	cmd, err := prog.Build()
	var pid int
	var done <-chan reaper.Status
	if err == nil {
		pid, done, err = r.deps.Spawner.Start(cmd.Path, cmd.Argv, cmd.Attr, cmd.Signals)
	}
	if err != nil {
		r.deps.Log.Error("cannot run finish", "svc", r.name, "path", argv[0], "err", err)
		return false
	}
	r.fin = &finishRun{pid: pid, inst: p, done: done, stopping: stopping, log: r.log}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = defaultFinishTimeout
	}
	if !r.finalBy.IsZero() {
		timeout = min(timeout, time.Until(r.finalBy))
	}
	r.arm(timerFinish, timeout)
	r.set(StateStopping, "finish running")
	return true
}

// finished settles the exit the finish program followed; its exit code
// FinishStayDown keeps the service down.
func (r *runner) finished(st reaper.Status) {
	f := r.fin
	r.fin = nil
	r.stopTimer()
	signalGroup(f.pid, syscall.SIGKILL) // whatever it left behind
	if f.log != nil {
		f.log.EndLine()
	}
	stay := st.Signal == 0 && st.Code == config.FinishStayDown
	r.deps.Log.Debug("finish ended", "svc", r.name, "code", st.ExitStatus())
	once, start := r.onceAfterFinish, r.startAfterFinish
	r.onceAfterFinish, r.startAfterFinish = false, false
	r.settle(f.inst, stay, f.stopping || start)
	if once && !stay && r.proc == nil && !r.removing {
		r.handleOnce(opStartOnce) // the one run asked for while finish ran
	}
}

// handleFinishing records a request that arrives while the finish program
// runs: the want changes now, the process starts once it has ended. A
// start for one run (-o) wants down and is remembered for then. A start
// or restart begins a new streak of failures now, as at any other time,
// and is remembered too: the exit the finish program follows came before
// it, so it is settled as a requested restart's (at once), not weighed
// by the restart policy and the backoff (finished).
func (r *runner) handleFinishing(c command) error {
	r.onceAfterFinish = c.op == opStartOnce
	r.startAfterFinish = c.op == opStart || c.op == opRestart
	switch c.op {
	case opStop, opOnce, opStartOnce:
		r.want = false
		r.markFinal(c)
	default: // start, restart
		r.want = true
		r.newStreak()
	}
	r.set(r.state, r.reason)
	return nil
}

// markFinal records a stop for the container's shutdown, c.final: the
// service never starts again, and the shutdown's deadline ends a finish
// program too, one running now or one to come, as it ends a process.
func (r *runner) markFinal(c command) {
	if !c.final {
		return
	}
	r.final = true
	if c.deadline.IsZero() || (!r.finalBy.IsZero() && !c.deadline.Before(r.finalBy)) {
		return
	}
	r.finalBy = c.deadline
	if r.timerFor == timerFinish && r.finalBy.Before(r.timerAt) {
		r.arm(timerFinish, time.Until(r.finalBy)) // brought forward, never put off
	}
}

// handleOnce is s6-svc -O (once) and -o (startOnce): the running process is
// not restarted when it exits, which s6 shows as want down; -o starts it
// first when it is not running.
func (r *runner) handleOnce(o op) {
	switch {
	case r.proc != nil:
		r.want = false
	case o == opOnce:
		r.want = false
		r.stopTimer()
		if r.state == StateBackoff {
			r.set(StateDown, "stopped (s6-svc -O)")
			return
		}
	default:
		// One run, a start that fails included (in s6 the failed exec
		// is that run): nothing wants it up after.
		r.stopTimer()
		r.want = false
		r.spawn()
	}
	r.set(r.state, r.reason)
}
