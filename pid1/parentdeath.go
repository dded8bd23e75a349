package pid1

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"hinit/signame"
)

// tini's -p SIG (docs/tini.md): the kernel sends hinit SIG when hinit's
// parent dies; hinit forwards it to main, as tini does, and then shuts
// down, as SPEC §7 asks.

// catchable reports whether -p's signal can be caught and passed on:
// not KILL or STOP, nor CHLD (the reaper's) or URG (the Go runtime's).
func catchable(s syscall.Signal) bool {
	switch s {
	case 0, syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGCHLD, syscall.SIGURG:
		return false
	}
	return true
}

// setParentDeathSignal arms -p SIG. A parent that died before the kernel
// was asked is caught up with by sending the signal now. As PID 1 hinit
// cannot tell (parentGone is always true there): it waits for the signal.
func (h *hinit) setParentDeathSignal() {
	p := h.opts.pdeath
	if p == 0 {
		return
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(p), 0, 0, 0); err != nil {
		h.log.Warn("cannot set the parent-death signal", "signal", signame.Text(p), "err", err)
		return
	}
	if !h.isPID1 && h.parentGone() {
		syscall.Kill(os.Getpid(), p)
	}
}

// parentGone reports whether the process that started hinit has died. As
// the PID 1 of a namespace hinit cannot see its parent: the parent-death
// signal itself is then the only news of it.
func (h *hinit) parentGone() bool {
	return h.isPID1 || os.Getppid() != h.ppid
}
