//go:build amd64 || arm64

package reaper

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"hinit/childsig"
)

// sigaction is the kernel's struct sigaction on amd64 and arm64 (the
// layout the Go runtime uses there too).
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// ttyDispositions are SIGTTIN's and SIGTTOU's.
type ttyDispositions [2]sigaction

var ttySignals = [2]syscall.Signal{syscall.SIGTTIN, syscall.SIGTTOU}

// ttyFor is the two dispositions a child that ignores ignored starts with.
func ttyFor(ignored childsig.Set) *ttyDispositions {
	var d ttyDispositions
	for i, s := range ttySignals {
		if ignored.Has(s) {
			d[i].handler = 1 // SIG_IGN; zero is SIG_DFL
		}
	}
	return &d
}

// setTTY gives SIGTTIN and SIGTTOU the dispositions in want (default or
// ignored) for the fork that follows, and returns what to restore right
// after it. It talks to the kernel
// directly: os/signal would hand each change to its own locked thread and
// wait for it, several thread switches per start, which a thousand
// services at boot pay a thousand times. Go's own view of the two signals
// (ignored, no handler: handlingSig is 0, so the forked child keeps what is
// set here) is restored exactly by restoreTTY, and it never installs a
// handler for them meanwhile. As PID 1 the kernel drops a default-action
// signal to the namespace's init anyway, so the window cannot stop hinit;
// as a subreaper it lasts one fork.
func setTTY(want *ttyDispositions) (old ttyDispositions, err error) {
	for i, s := range ttySignals {
		act := want[i]
		if err = rtSigaction(s, &act, &old[i]); err != nil {
			if i == 1 {
				rtSigaction(ttySignals[0], &old[0], nil)
			}
			return old, err
		}
	}
	return old, nil
}

// restoreTTY puts back what setTTY found.
func restoreTTY(old *ttyDispositions) {
	for i, s := range ttySignals {
		rtSigaction(s, &old[i], nil)
	}
}

func rtSigaction(s syscall.Signal, act, old *sigaction) error {
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(act)),
		uintptr(unsafe.Pointer(old)), 8, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
