// Package reaper is the one place in hinit that calls wait4.
//
// A Go PID 1 that reaps with wait4(-1) in the background steals exit statuses
// from exec.Cmd.Wait (ramr/go-reaper#2, #11: "waitid: no child processes",
// lost exit codes). containerd's answer, used here: exactly one goroutine
// calls wait4, and every process hinit starts is registered with it before it
// can possibly exit. Start forks while holding the same lock the reaping loop
// takes, so the pid is in the table before wait4 can return it. Nothing in
// hinit calls exec.Cmd.Wait or os.Process.Wait.
//
// Processes that are not registered are orphans the kernel handed to us (as
// PID 1 or as a child subreaper); they are reaped and counted.
package reaper

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Status is how a process ended.
type Status struct {
	PID    int
	Code   int            // exit code, when Signal == 0
	Signal syscall.Signal // the signal that killed it, or 0
	At     time.Time
}

// ExitStatus is the status a shell would report: the exit code, or 128+N
// when the process died of signal N.
func (s Status) ExitStatus() int {
	if s.Signal != 0 {
		return 128 + int(s.Signal)
	}
	return s.Code
}

// Reaper reaps every child of this process and hands each registered
// child's status to whoever started it.
type Reaper struct {
	log     *slog.Logger
	sigchld chan os.Signal
	orphans atomic.Uint64

	mu      sync.Mutex
	waiting map[int]chan Status // pid -> where its status goes, guarded by mu
	idle    chan struct{}       // closed while we have no children at all, guarded by mu
	keepTTY bool                // give children the inherited SIGTTIN/SIGTTOU, guarded by mu
	ttyInh  ttyDispositions     // SIGTTIN/SIGTTOU as this process inherited them, guarded by mu
	warn    atomic.Bool         // log each orphan reaped as a warning (tini -w)
}

// New subscribes to SIGCHLD at once, so it must be called before any child
// exists. Run must then be started to do the reaping. It also marks every
// descriptor this process inherited (3 and up) close-on-exec, so that a
// child gets exactly the descriptors Start is given and nothing hinit's own
// parent left open (catatonit's close_fds_ge_than does the same).
func New(log *slog.Logger) *Reaper {
	sealInherited(log)
	r := &Reaper{
		log:     log,
		sigchld: make(chan os.Signal, 1),
		waiting: make(map[int]chan Status),
		idle:    make(chan struct{}),
	}
	signal.Notify(r.sigchld, syscall.SIGCHLD)
	return r
}

// IgnoreTTYSignals makes this process ignore SIGTTIN and SIGTTOU, as a PID 1
// must, while children still start with the dispositions this process
// inherited: default, or ignored when whoever started hinit ignored them.
// An ignored signal stays ignored across exec, so each fork in Start
// happens with the two set to what was inherited, and ignored again right
// after (ttysig_linux.go; tini does the same restoration in its child). It
// must be called before anything else changes the two.
func (r *Reaper) IgnoreTTYSignals() {
	r.mu.Lock()
	defer r.mu.Unlock()
	inh, err := currentTTY()
	if err != nil {
		r.log.Warn("cannot read the inherited SIGTTIN/SIGTTOU; children get the defaults", "err", err)
	}
	r.keepTTY, r.ttyInh = true, inh
	signal.Ignore(syscall.SIGTTIN, syscall.SIGTTOU)
}

// WarnOrphans makes every orphan reaped a warning ("reaped zombie process
// with pid=N", tini -w) instead of a debug line.
func (r *Reaper) WarnOrphans() { r.warn.Store(true) }

// Start forks and execs argv0 with attr and registers the child before the
// reaping loop can see it exit. The returned channel delivers its Status
// exactly once.
func (r *Reaper) Start(argv0 string, argv []string, attr *syscall.ProcAttr) (int, <-chan Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keepTTY {
		old, err := setTTY(&r.ttyInh)
		if err != nil {
			return 0, nil, fmt.Errorf("restore SIGTTIN/SIGTTOU for the child: %w", err)
		}
		defer restoreTTY(&old)
	}
	pid, err := syscall.ForkExec(argv0, argv, attr)
	if err != nil {
		return 0, nil, err
	}
	done := make(chan Status, 1)
	r.waiting[pid] = done
	r.markBusy()
	return pid, done, nil
}

// markBusy records that we have a child. Caller holds mu.
func (r *Reaper) markBusy() {
	select {
	case <-r.idle:
		r.idle = make(chan struct{})
	default:
	}
}

// Idle returns a channel that is closed once this process has no children
// left at all, registered or not. Shutdown waits on it instead of sleeping.
func (r *Reaper) Idle() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idle
}

// Orphans is the number of unregistered processes reaped so far.
func (r *Reaper) Orphans() uint64 { return r.orphans.Load() }

// Run reaps on every SIGCHLD until ctx ends. It reaps once at the start, so
// children that exited before Run began are not missed.
func (r *Reaper) Run(ctx context.Context) {
	r.reap()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.sigchld:
			r.reap()
		}
	}
}

// reap collects every child that has exited by now. Run calls it on
// SIGCHLD; shutdown may call it directly. Statuses are handed out after
// the collection, so that whoever gets the last child's status already
// finds Idle closed.
func (r *Reaper) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	type exit struct {
		pid int
		ws  unix.WaitStatus
	}
	var exits []exit
	defer func() {
		for _, e := range exits {
			r.deliver(e.pid, e.ws)
		}
	}()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ECHILD {
			r.markIdle()
			return
		}
		if err != nil {
			r.log.Error("wait4 failed", "err", err)
			return
		}
		if pid == 0 {
			return // children remain, none has exited
		}
		exits = append(exits, exit{pid, ws})
	}
}

// markIdle closes idle if it is open. Caller holds mu.
func (r *Reaper) markIdle() {
	select {
	case <-r.idle:
	default:
		close(r.idle)
	}
}

// deliver hands a status to the process's owner, or counts an orphan.
// Caller holds mu.
func (r *Reaper) deliver(pid int, ws unix.WaitStatus) {
	if !ws.Exited() && !ws.Signaled() {
		return // stopped or continued: not an exit (we never ask for those)
	}
	done, ok := r.waiting[pid]
	if !ok {
		r.orphans.Add(1)
		if r.warn.Load() {
			r.log.Warn(fmt.Sprintf("reaped zombie process with pid=%d", pid))
		} else if r.log.Enabled(context.Background(), slog.LevelDebug) {
			r.log.Debug("reaped orphan", "pid", pid)
		}
		return
	}
	delete(r.waiting, pid)
	st := Status{PID: pid, At: time.Now()}
	if ws.Signaled() {
		st.Signal = ws.Signal()
	} else {
		st.Code = ws.ExitStatus()
	}
	done <- st // buffered: never blocks
}

// sealInherited sets FD_CLOEXEC on every descriptor from 3 up. Descriptors
// Go opens are close-on-exec already; inherited ones are not.
func sealInherited(log *slog.Logger) {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Kernels before 5.11: walk the open descriptors.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		log.Warn("cannot list inherited descriptors; children may inherit them", "err", err)
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
}
