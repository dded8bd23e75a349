package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"hinit/account"
	"hinit/cgroup"
	"hinit/config"
	"hinit/launch"
	"hinit/reaper"
	"hinit/svclog"
)

// instance is one run of a service's process.
type instance struct {
	pid     int
	started time.Time
	done    <-chan reaper.Status
	ready   chan struct{} // closed when the process reported ready
	cancel  context.CancelFunc
	def     *config.Service // expanded for this run
	acct    *account.Account
	log     *svclog.Log // its stdout and stderr
	// restartAsked: when a signal meant as a restart reached it
	// (SignalRestart); an exit within its stop timeout of that is a
	// requested restart, not a failure. A later one (the signal was
	// ignored, the process crashed long after) is judged as any exit.
	restartAsked time.Time
	// lingering: the process exited while stopping and what it left in
	// its process group is being waited for (exited); done then delivers
	// its status once the group is empty.
	lingering bool
	// mark: the container cgroup's counts before the fork; killed: hinit
	// sent the process SIGKILL. exitOf judges its death by them.
	mark   cgroup.Mark
	killed bool
}

// spawn starts a new instance from the current definition, expanded against
// the container environment of this moment (package launch builds it). A
// failure to start counts as a quick exit with 127 (not found) or 126
// (cannot execute).
func (r *runner) spawn() {
	env := r.deps.Environ()
	def := r.def.Expanded(env)
	mark := r.deps.Cgroup.Mark()
	inst, err := r.startProcess(def, env)
	if err != nil {
		// A start that failed while the pids limit refused a fork (or
		// the start shim's threads) is said to, as a failed run is.
		ex := &Exit{Code: launch.ExitCode(err), At: time.Now()}
		err = mark.StartFailed(err, ex.Code)
		ex.PidsLimit = errors.Is(err, cgroup.ErrPidsLimited)
		why := err.Error()
		r.deps.Log.Error("cannot start", "svc", r.name, "err", why)
		r.lastExit = ex
		r.afterExit(def, 0, why, true)
		return
	}
	inst.mark = mark
	r.proc = inst
	r.deps.Log.Info("started", "svc", r.name, "pid", inst.pid)
	if inst.ready == nil {
		r.set(StateUp, "")
		return
	}
	r.set(StateStarting, "")
}

func (r *runner) startProcess(def *config.Service, env map[string]string) (*instance, error) {
	if len(def.Command) == 0 {
		return nil, fmt.Errorf("no command")
	}
	acct, err := r.account(def.User)
	if err != nil {
		return nil, err
	}
	prog := r.program(def, acct, def.Command, env)
	cmd, err := prog.Build()
	if err != nil {
		return nil, err // before the log opens: a command that cannot run creates no log file
	}
	log, err := r.openLog(def, acct)
	if err != nil {
		return nil, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	files := r.io.files(devnull, log.Writer())
	inst := &instance{def: def, acct: acct, log: log}
	ctx, cancel := context.WithCancel(context.Background())
	inst.cancel = cancel
	notify, err := r.readiness(ctx, inst, &files)
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.Attr.Files = files
	inst.pid, inst.done, err = r.deps.Spawner.Start(cmd.Path, cmd.Argv, cmd.Attr, cmd.Signals)
	if notify != nil {
		notify.Close() // the child has its copy
	}
	if err != nil {
		cancel()
		return nil, prog.StartError(cmd, err)
	}
	inst.started = time.Now()
	return inst, nil
}

// program is what runs argv for def as acct, with env: the service's
// command, and its finish, which runs where the command ran (its workdir,
// else acct's home), in a session of its own, with the same signals.
func (r *runner) program(def *config.Service, acct *account.Account, argv []string, env map[string]string) launch.Program {
	return launch.Program{Argv: argv, Env: env, User: acct, Switch: r.deps.Root, Own: def.Env,
		Workdir: def.Workdir, InHome: true, Session: launch.NewSession,
		DefaultSignals: def.DefaultSignals, RootsPATH: r.asRoot(acct)}
}

// asRoot reports whether a program started as acct runs as root.
func (r *runner) asRoot(acct *account.Account) bool {
	return r.deps.Root && acct != nil && acct.UID == 0
}

// account resolves who the service runs as. When hinit is not root nothing
// can be switched, so the service runs as hinit's own user.
func (r *runner) account(spec string) (*account.Account, error) {
	if !r.deps.Root {
		return account.Lookup(fmt.Sprint(os.Getuid()))
	}
	if spec == "" {
		spec = r.deps.DefaultUser
	}
	if spec == "" {
		spec = "0"
	}
	return account.Lookup(spec)
}

// openLog returns the service's log, opening it at the first start and
// again whenever the log settings changed.
func (r *runner) openLog(def *config.Service, acct *account.Account) (*svclog.Log, error) {
	opts := svclog.Options{
		Name: r.name, Dir: def.Log.Dir, MaxSize: def.Log.MaxSize, Keep: def.Log.Keep,
		Owner:  acct.ID(),
		Logger: r.deps.Log,
	}
	if def.Log.ConsoleOn() && r.deps.Console != nil {
		opts.Console = r.deps.Console
	}
	key := fmt.Sprintf("%s|%d|%d|%v|%d", opts.Dir, opts.MaxSize, opts.Keep, opts.Console != nil, acct.UID)
	if r.log != nil && key == r.logKey {
		return r.log, nil
	}
	log, err := svclog.New(opts)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	if r.log != nil {
		// The old log drains in the background and finishes once the
		// processes that still hold it are gone; closeLogs waits for
		// what is left of it at the end.
		r.log.Retire()
		r.retired = append(slices.DeleteFunc(r.retired, finished), r.log)
		r.dropRetired()
	}
	r.log, r.logKey = log, key
	return log, nil
}

// maxRetired bounds the retired logs a service keeps draining.
const maxRetired = 4

// dropRetired closes the oldest retired logs beyond maxRetired now, what
// they still held lost. A retired log lives while any process holds its
// pipe: a service that changes its own log settings at each run and
// leaves a process behind (setsid) would otherwise cost PID 1 a pipe, a
// log dir and a file per restart, for good.
func (r *runner) dropRetired() {
	if len(r.retired) <= maxRetired {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no wait: the reader stops at once
	for _, l := range r.retired[:len(r.retired)-maxRetired] {
		l.Close(ctx)
	}
	r.deps.Log.Warn("log settings changed while earlier runs' processes still write: the oldest of their logs is closed", "svc", r.name)
	r.retired = slices.Delete(r.retired, 0, len(r.retired)-maxRetired)
}

// finished reports whether a retired log has written its last line.
func finished(l *svclog.Log) bool {
	select {
	case <-l.Done():
		return true
	default:
		return false
	}
}

// closeWait bounds how long closeLogs waits for a service's logs.
const closeWait = 5 * time.Second

// flushGrace is how long past the shutdown's deadline a stopped service's
// logs may take to write their last lines: those of a process killed at
// the deadline, which a healthy disk writes in milliseconds (a log holds
// at most its queue's 512 KiB and the pipe's 64 KiB). A console still
// behind then gives up, and the log file gets svclog's forcedWait more:
// half a second past the deadline in all, half of shutdownMargin.
const flushGrace = 250 * time.Millisecond

// closeLogs flushes and closes every log of the service once its processes
// are gone, for at most closeWait, and for the container's shutdown never
// past its deadline and flushGrace: an output that has not written
// everything by then (a stalled console, a hung disk) loses the rest.
func (r *runner) closeLogs() {
	by := time.Now().Add(closeWait)
	if r.final && !r.finalBy.IsZero() {
		by = earliest(by, r.finalBy.Add(flushGrace))
	}
	ctx, cancel := context.WithDeadline(context.Background(), by)
	defer cancel()
	for _, l := range append(r.retired, r.log) {
		if l == nil {
			continue
		}
		if err := l.Close(ctx); err != nil {
			r.deps.Log.Warn("log not flushed in time: what it still held is lost", "svc", r.name, "err", err)
		}
	}
}
