// Package asuser lets hinit, which runs as root, touch files with the rights
// of an unprivileged user and never root's: a log dir or $HERMES_HOME belongs
// to the hermes user, and a symlink planted there must not make root write
// anywhere.
//
// Linux keeps filesystem credentials (fsuid, fsgid, supplementary groups) per
// thread. Do switches them on one OS thread locked to one goroutine, runs a
// function there and switches them back afterwards, so no other goroutine
// ever runs with the borrowed identity and the rest of hinit keeps root's
// rights. A thread whose identity cannot be read back whole is destroyed
// instead of reused. The helpers MkdirAll, OpenFile and WriteFileAtomic refuse to
// go through a symlink, so they are safe to use inside and outside Do.
package asuser

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// ID is the filesystem identity Do switches to.
type ID struct {
	UID    int
	GID    int
	Groups []int // supplementary groups; nil means none
}

// Do runs fn with the filesystem rights of id and returns its error.
//
// When hinit is root, fn runs on a fresh goroutine locked to its OS thread;
// that thread gets id's groups, fsgid and fsuid (the kernel drops the thread's
// filesystem capabilities such as CAP_DAC_OVERRIDE when fsuid leaves 0, and
// gives them back when it returns to 0). Afterwards the thread gets back the
// identity it had, read back to check, and only then is it unlocked for the
// runtime to reuse; otherwise the goroutine ends still locked, and the
// runtime destroys the thread. At most maxSwitched calls run at once, each
// on a thread of its own (and maxRootSwitched as root: rootTurns); the
// others wait for their turn. Both matter under
// a pids limit, where a thread the runtime cannot create ends hinit ("fatal
// error: newosproc"): a Do per log rotation destroyed one thread each time,
// and ten logs rotating at once needed ten threads more. fn must not call
// Do (it would wait for a turn its caller holds), nor start goroutines
// that expect the identity: they run on other threads, with root's rights.
// A panic in fn is re-raised in the caller.
//
// When hinit is not root (docker run --user, OpenShift's random uid) it cannot
// switch: fn runs quiet (Quiet) on the caller's goroutine with the process's
// own rights. Those are the rights of an unprivileged user already, which is
// the point. Nor is there anything to switch to for root with hinit's own
// group (a root service's log): fn runs quiet too, and takes no turn, so
// that the image's user, who may keep all four busy (a tree it grows under
// a removal, a file of a hung volume), never holds root's own work.
func Do(id ID, fn func() error) error { return DoCtx(context.Background(), id, fn) }

// DoCtx is Do for a caller that may give up: when ctx ends before fn's
// turn comes, fn is not run and ctx's error is returned (a request whose
// client left must not be done later, unasked).
func DoCtx(ctx context.Context, id ID, fn func() error) error {
	if unix.Geteuid() != 0 || id.UID == 0 && id.GID == unix.Getegid() {
		var err error
		Quiet(func() { err = fn() })
		return err
	}
	t := turns
	if id.UID == 0 {
		t = rootTurns
	}
	if err := ctx.Err(); err != nil { // select would pick a free turn half the time
		return err
	}
	select {
	case t <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-t }()
	done := make(chan result, 1)
	go runLocked(id, fn, done)
	r := <-done
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}

// maxSwitched is how many Do calls run at once. A burst of them (a
// thousand services opening their log files at once) made as many
// threads, which the runtime keeps idle for ever once they are given back
// (300 of them). Four cover a few logs rotating together; a fifth call
// waits for a turn, and only a volume that hangs four calls at once
// makes the next wait for it too, as everything on that volume does.
const maxSwitched = 4

// turns holds one token per Do call running as a user other than root;
// rootTurns those as root with another group (a root service's log of
// group adm), which the image's user, who can keep every one of the
// others busy (its own files' work), never holds.
var (
	turns     = make(chan struct{}, maxSwitched)
	rootTurns = make(chan struct{}, maxRootSwitched)
)

// maxRootSwitched is how many Do calls as root with another group run at
// once, beside maxSwitched of the others.
const maxRootSwitched = 2

// result is what fn returned, or the panic it raised.
type result struct {
	err   error
	panic any
}

// runLocked locks the calling goroutine to an OS thread other than the
// main one and runs fn there as id (runAs unlocks it once the thread's own
// identity is back).
func runLocked(id ID, fn func() error, done chan<- result) {
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		runAs(id, fn, done)
		return
	}
	// The runtime never destroys the main thread: it would park it forever
	// with id's credentials, shown in /proc/<pid>/status. Hand over to a
	// goroutine that cannot land here, since this one holds the main thread
	// until the other has locked its own.
	locked := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		close(locked)
		runAs(id, fn, done)
	}()
	<-locked
	runtime.UnlockOSThread()
}

// Quiet runs fn on the calling goroutine, locked to its thread, with every
// signal but the faults blocked on that thread meanwhile (blockSignals);
// the thread's mask is put back after, and only then is the thread
// unlocked (otherwise it ends with the goroutine). It is for work that may
// sleep in the kernel on a volume that hangs (a log's write(2) to NFS or
// FUSE): the kernel gives a signal for the process to one thread, and one
// asleep there holds it (runAs says how PID 1 then reaped nothing), while
// with the signal blocked it goes to another thread. Do's fn runs quiet
// already. fn may call Quiet again, but not Do when hinit is root: Do
// waits for a turn, and a locked goroutine waits on its thread.
func Quiet(fn func()) {
	runtime.LockOSThread()
	mask, err := blockSignals()
	if err != nil { // the mask is unchanged: fn runs as it would have
		runtime.UnlockOSThread()
		fn()
		return
	}
	defer func() {
		if setSignalMask(mask) == nil {
			runtime.UnlockOSThread()
		}
	}()
	fn()
}

// errGoexit reports an fn that called runtime.Goexit (t.FailNow, say).
var errGoexit = errors.New("function exited its goroutine")

// runAs switches the calling thread, locked by the caller, to id, runs fn
// there, switches the thread back to the identity it had and sends how fn
// ended. The thread is unlocked only once its identity and its signal mask
// are back whole: any other ends with this goroutine, still locked, and the
// runtime destroys it.
//
// While fn runs the thread blocks every signal but the faults: one stuck in
// a system call on a hung volume (NFS, FUSE) cannot take a signal, and the
// kernel, which gives a process's signal to one thread, left SIGCHLD
// pending on it while no other thread heard of it: PID 1 reaped nothing,
// not even main, until another signal came.
func runAs(id ID, fn func() error, done chan<- result) {
	own, err := threadIdentity()
	if err != nil {
		done <- result{err: fmt.Errorf("read the thread's identity: %w", err)}
		return
	}
	mask, err := blockSignals()
	if err != nil {
		done <- result{err: fmt.Errorf("block the thread's signals: %w", err)}
		return
	}
	r := result{err: errGoexit}
	defer func() {
		if p := recover(); p != nil {
			r = result{panic: p}
		}
		if switchThread(own) == nil && setSignalMask(mask) == nil {
			runtime.UnlockOSThread()
		}
		done <- r
	}()
	if err := switchThread(id); err != nil {
		r.err = fmt.Errorf("switch to uid %d gid %d: %w", id.UID, id.GID, err)
		return
	}
	r.err = fn()
}
