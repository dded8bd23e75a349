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
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"hinit/childsig"
	"hinit/signame"
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
		return signame.ExitStatus(s.Signal)
	}
	return s.Code
}

// Stop says a registered child was stopped, and by which signal.
type Stop struct {
	PID    int
	Signal syscall.Signal
}

// Reaper reaps every child of this process and hands each registered
// child's status to whoever started it.
type Reaper struct {
	log     *slog.Logger
	sigchld chan os.Signal
	stops   chan Stop // registered children stopped (Stops)
	orphans atomic.Uint64

	mu         sync.Mutex
	waiting    map[int]chan Status // pid -> where its status goes, guarded by mu
	idle       chan struct{}       // closed while we have no children at all, guarded by mu
	keepTTY    bool                // set SIGTSTP/SIGTTIN/SIGTTOU for each child's fork, guarded by mu
	shimWarned bool                // a child could not start through the shim, guarded by mu
	warn       atomic.Bool         // log each orphan reaped as a warning (tini -w)
	inherited  []int               // descriptors 3 and up hinit was started with, open across exec; set by New
}

// New subscribes to SIGCHLD at once, so it must be called before any child
// exists. Run must then be started to do the reaping. It also marks every
// descriptor this process inherited (3 and up) close-on-exec, so that a
// child gets exactly the descriptors Start is given and nothing hinit's own
// parent left open (catatonit's close_fds_ge_than does the same); Inherited
// lists them, for main, which tini would give them to.
func New(log *slog.Logger) *Reaper {
	r := &Reaper{
		inherited: sealInherited(log),
		log:       log,
		sigchld:   make(chan os.Signal, 1),
		stops:     make(chan Stop, 16),
		waiting:   make(map[int]chan Status),
		idle:      make(chan struct{}),
	}
	signal.Notify(r.sigchld, syscall.SIGCHLD)
	return r
}

// IgnoreTTYSignals makes this process ignore SIGTTIN and SIGTTOU and catch
// SIGTSTP, so that none stops it, as a PID 1 must, while children still
// start with the dispositions their childsig.State gives the three: each
// fork in Start happens with them set that way, and they are put back
// right after (childsig.SetTTY; tini does the same restoration in its
// child). childsig has read what was inherited before this changes it.
func (r *Reaper) IgnoreTTYSignals() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keepTTY = true
	signal.Ignore(syscall.SIGTTIN, syscall.SIGTTOU)
	// Caught, not ignored: a caught signal is never at its default in
	// hinit, even while a child is forked (childsig.SetTTY), and exec
	// gives the child its default by itself. Nobody reads the channel.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTSTP)
}

// WarnOrphans makes every orphan reaped a warning ("reaped zombie process
// with pid=N", tini -w) instead of a debug line.
func (r *Reaper) WarnOrphans() { r.warn.Store(true) }

// Start forks and execs argv0 with attr and registers the child before the
// reaping loop can see it exit. The child starts with the signal state sig
// (childsig): its mask through the thread that forks, its ignored signals
// as the fork leaves them or, where hinit's own dispositions differ from
// sig's, through the shim. The returned channel delivers its Status
// exactly once.
func (r *Reaper) Start(argv0 string, argv []string, attr *syscall.ProcAttr, sig childsig.State) (int, <-chan Status, error) {
	pid, done, shimErr, err := r.fork(argv0, argv, attr, sig)
	if err != nil {
		return 0, nil, err
	}
	if shimErr >= 0 {
		if err := r.awaitShim(pid, shimErr); err != nil {
			return 0, nil, err // its status goes to done, which nobody reads
		}
	}
	return pid, done, nil
}

// fork forks the child and registers it, under mu. shimErr is the read end
// of the shim's error pipe when the child is the shim, else -1.
func (r *Reaper) fork(argv0 string, argv []string, attr *syscall.ProcAttr, sig childsig.State) (pid int, done chan Status, shimErr int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sig.Blocked &^= childsig.Runtime
	if r.keepTTY {
		restore, err := childsig.SetTTY(sig.Ignored)
		if err != nil {
			return 0, nil, -1, fmt.Errorf("restore SIGTSTP/SIGTTIN/SIGTTOU for the child: %w", err)
		}
		defer restore()
	}
	shimErr = -1
	// A fork leaves ignored exactly what this process ignores now; only
	// the signals hinit inherited ignored, and SIGTSTP/SIGTTIN/SIGTTOU, can be.
	// A child that runs as another user than root goes through the shim
	// too: a plain fork waits for its exec here, under mu, and that user
	// can hold the exec (a write lease on its own program holds every
	// open of it up to fs.lease-break-time, 45 s): nothing would be reaped
	// or started meanwhile. The shim is hinit's own binary, which no one
	// else may lease, and its exec of the program is awaited without mu.
	if childsig.Ignoring(sig.Ignored|childsig.Inherited().Ignored) != sig.Ignored || asUser(attr) {
		pid, shimErr, err = r.forkShim(argv0, argv, attr, sig)
	} else {
		pid, err = forkMasked(argv0, argv, attr, sig.Blocked)
	}
	if err != nil {
		return 0, nil, -1, err
	}
	done = make(chan Status, 1)
	r.waiting[pid] = done
	r.markBusy()
	return pid, done, shimErr, nil
}

// asUser reports whether the child switches to a user other than root.
func asUser(attr *syscall.ProcAttr) bool {
	return attr.Sys != nil && attr.Sys.Credential != nil && attr.Sys.Credential.Uid != 0
}

// forkMasked forks and execs with the mask blocked (childsig.WithMask).
func forkMasked(argv0 string, argv []string, attr *syscall.ProcAttr, blocked childsig.Set) (pid int, err error) {
	attr, undo, err := belowLimit(attr)
	if err != nil {
		return 0, err
	}
	defer undo()
	err = childsig.WithMask(blocked, func() (err error) {
		pid, err = syscall.ForkExec(argv0, argv, attr)
		return err
	})
	return pid, err
}

// belowLimit returns attr with the Files the fork could not pass under the
// open files limit replaced by copies at lower numbers, and what closes
// the copies once the fork is done. Go's child (syscall's
// forkAndExecInChild1) moves its exec-error pipe, and each Files[i] < i,
// with dup3 to numbers above the highest of Files (and len(Files)), and
// dup3 to a number at or past RLIMIT_NOFILE fails with EBADF: a file at
// the limit's last number, as PID 1 gets when its table is nearly full (a
// log's pipe, /dev/null), made the start fail with "bad file descriptor".
// With no number low enough free the table is full, and the start fails
// with EMFILE, as the fork's own pipe would.
func belowLimit(attr *syscall.ProcAttr) (*syscall.ProcAttr, func(), error) {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur > 1<<30 {
		return attr, func() {}, nil
	}
	// The child's highest target: one past the highest of Files, the
	// pipe's, one per Files[i] < i, and one it may skip (the pipe's own).
	top := int(lim.Cur) - 3
	for i, fd := range attr.Files {
		if int(fd) >= 0 && int(fd) < i {
			top--
		}
	}
	var copies []int
	undo := func() {
		for _, fd := range copies {
			syscall.Close(fd)
		}
	}
	var a syscall.ProcAttr
	for i, fd := range attr.Files {
		if int(fd) <= top || fd == ^uintptr(0) {
			continue
		}
		if copies == nil {
			a = *attr
			a.Files = slices.Clone(attr.Files)
		}
		// At len(Files) or above: not one more Files[i] < i.
		c, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, len(attr.Files))
		if err == nil && c > top {
			syscall.Close(c)
			err = syscall.EMFILE
		}
		if err != nil {
			undo()
			return nil, nil, err
		}
		copies = append(copies, c)
		a.Files[i] = uintptr(c)
	}
	if copies == nil {
		return attr, undo, nil
	}
	return &a, undo, nil
}

// The shim is hinit's own binary, run through this path; a shim that has
// not exec'd the program within shimTimeout is killed. Variables for the
// tests.
var (
	shimExe     = "/proc/self/exe"
	shimTimeout = 10 * time.Second
)

// forkShim starts argv0 through the shim (childsig.ShimName): hinit's own
// binary, forked as this child, sets sig and execs argv0, writing the
// errno of a failed exec on a close-on-exec pipe whose read end it returns
// (awaitShim reads it), so that the failure is Start's error as with a
// plain fork. A closed fd 0-2 becomes /dev/null on the way (the Go
// runtime's start opens it there); hinit never starts a program with one
// closed. When the shim cannot be started where a plain fork can (no
// /proc: the shim runs as root, or as hinit's own user, so its binary is
// executable), the child starts as a plain fork leaves it, with a warning
// the first time. Caller holds mu.
func (r *Reaper) forkShim(argv0 string, argv []string, attr *syscall.ProcAttr, sig childsig.State) (int, int, error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return 0, -1, err
	}
	a := *attr
	a.Files = slices.Clone(attr.Files)
	for len(a.Files) < 3 {
		a.Files = append(a.Files, ^uintptr(0)) // closed in the child, as when missing
	}
	a.Files = append(a.Files, uintptr(p[1]))
	// A child of another user is forked as root, and the shim becomes
	// that user and enters the dir itself: forked as that user, the child
	// could be stopped by it (SIGSTOP) before its exec, which the fork
	// waits for under mu, and PID 1 would reap and start nothing again.
	var cred *syscall.Credential
	var dir string
	if asUser(attr) {
		sys := *attr.Sys
		cred, sys.Credential = sys.Credential, nil
		dir, a.Dir, a.Sys = a.Dir, "", &sys
	}
	pid, err := forkMasked(shimExe, childsig.ShimArgs(sig, len(a.Files)-1, cred, dir, argv0, argv), &a, sig.Blocked)
	syscall.Close(p[1])
	if err == nil {
		return pid, p[0], nil
	}
	syscall.Close(p[0])
	// The shim's own exec failed, or the fork before any exec (a workdir,
	// a user): a plain fork says which.
	pid, perr := forkMasked(argv0, argv, attr, sig.Blocked)
	if perr == nil && !r.shimWarned {
		r.shimWarned = true
		r.log.Warn(fmt.Sprintf("cannot start a child through %s (hinit's own binary): %v; it starts with every "+
			"signal hinit forwards at its default, whatever hinit inherited (ignored: %s)", shimExe, err, sig.Ignored))
	}
	return pid, -1, perr
}

// awaitShim reads the shim's error pipe fd to its end (childsig.ShimOutcome):
// its ready byte alone when the shim exec'd the program, an errno when a
// step failed, nothing when it ended before (its status then goes to the
// channel nobody reads, and Start fails). It runs
// without mu: the shim runs as the child's user, who may stop it, and the
// reaper goes on meanwhile. A shim still there after shimTimeout is killed
// (it is registered and not reaped while it is in waiting, so the pid is
// still its own) and Start fails.
func (r *Reaper) awaitShim(pid, fd int) error {
	defer syscall.Close(fd)
	deadline := time.Now().Add(shimTimeout)
	var b [5]byte
	n := 0
	for n < len(b) {
		left := time.Until(deadline)
		if left <= 0 {
			r.killShim(pid)
			return fmt.Errorf("%s did not exec the program within %v (stopped?): killed", childsig.ShimName, shimTimeout)
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, int(left/time.Millisecond)+1); err != nil && err != unix.EINTR {
			return fmt.Errorf("wait for %s: %w", childsig.ShimName, err)
		}
		if pfd[0].Revents == 0 {
			continue
		}
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if m <= 0 {
			break
		}
		n += m
	}
	return childsig.ShimOutcome(b[:n])
}

// killShim kills the shim pid unless it has been reaped already.
func (r *Reaper) killShim(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.waiting[pid]; ok {
		syscall.Kill(pid, syscall.SIGKILL)
	}
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

// Stops delivers each stop of a registered child, from the wait4 that
// reaps (WUNTRACED): a terminal's Ctrl-Z stopped main, say. A stop that
// finds 16 undelivered is dropped, with a debug line.
func (r *Reaper) Stops() <-chan Stop { return r.stops }

// reap collects every child that has exited or stopped by now. Run calls
// it on SIGCHLD; shutdown may call it directly. Statuses are handed out
// after the collection, so that whoever gets the last child's status
// already finds Idle closed.
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
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WUNTRACED, nil)
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

// deliver hands a status to the process's owner, or counts an orphan; a
// registered child's stop goes to Stops. Caller holds mu.
func (r *Reaper) deliver(pid int, ws unix.WaitStatus) {
	done, ok := r.waiting[pid]
	if ws.Stopped() && ok {
		select {
		case r.stops <- Stop{PID: pid, Signal: ws.StopSignal()}:
		default:
			r.log.Debug("stop of a child not delivered: too many undelivered", "pid", pid)
		}
	}
	if !ws.Exited() && !ws.Signaled() {
		return // stopped: not an exit
	}
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

// probeFDs is the last descriptor asked for when /proc cannot list them:
// main is given none past launch.MaxFD, 1023, anyway.
const probeFDs = 1023

// Inherited are the descriptors from 3 up that hinit was started with and
// that an exec would have kept (podman's --preserve-fds, socket
// activation, `tini -- app 3<file`): sealed from every child, they are
// for main to be given, as tini gives them.
func (r *Reaper) Inherited() []int { return r.inherited }

// sealInherited sets FD_CLOEXEC on every descriptor from 3 up and returns
// those that did not have it. Descriptors Go opens are close-on-exec
// already; inherited ones are not. Without /proc (a chroot, bwrap: where
// hinit is not a container's init) each number up to probeFDs is asked
// instead; they were sealed unlisted, and main never got them.
func sealInherited(log *slog.Logger) []int {
	var open []int
	inherited := func(fd int) {
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			open = append(open, fd)
		}
	}
	ents, listErr := os.ReadDir("/proc/self/fd") // its own dir fd is close-on-exec, and closed again
	if listErr == nil {
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= 3 {
				inherited(fd)
			}
		}
	} else {
		for fd := 3; fd <= probeFDs; fd++ {
			inherited(fd)
		}
	}
	slices.Sort(open) // listed by name
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return open
	}
	// Kernels before 5.11: one at a time.
	if listErr != nil {
		log.Warn("cannot list inherited descriptors; children may inherit them", "err", listErr)
	}
	for _, fd := range open {
		unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
	}
	return open
}
