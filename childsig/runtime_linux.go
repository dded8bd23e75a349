//go:build linux && (amd64 || arm64)

package childsig

import (
	"runtime"
	"syscall"
	"unsafe"

	_ "unsafe" // go:linkname

	"golang.org/x/sys/unix"
)

// The runtime's record of what the process started with (runtime/proc.go,
// runtime/signal_unix.go): the mask of the first thread, read before the
// runtime changed it, and the handler each signal had before the runtime
// put its own there (SIG_DFL, 0, for the signals it leaves alone, which
// the kernel then still holds as inherited). Both are written before any
// package's init; fwdSig again only when os/signal takes a signal back
// after ignoring it, which nothing does before childsig's init.
//
//go:linkname runtimeInitSigmask runtime.initSigmask
var runtimeInitSigmask [2]uint32

//go:linkname runtimeFwdSig runtime.fwdSig
var runtimeFwdSig [65]uintptr

const sigIgn = 1 // SIG_IGN

// inherited is what this process started with, read by init.
var inherited State

func init() { inherited = capture() }

// capture reads the inherited state: the runtime's record, and the kernel
// for the signals the runtime has not touched.
func capture() State {
	st := State{Blocked: Set(runtimeInitSigmask[0]) | Set(runtimeInitSigmask[1])<<32}
	for n := syscall.Signal(1); n <= 64; n++ {
		if runtimeFwdSig[n] == sigIgn || ignoredNow(n) {
			st.Ignored |= bit(n)
		}
	}
	return st
}

// Inherited is the signal state this process started with.
func Inherited() State { return inherited }

// Ignoring is the part of s this process ignores now (SIG_IGN in the
// kernel's table): those stay ignored across a fork and an exec, every
// other signal starts at its default in a child.
func Ignoring(s Set) Set {
	var out Set
	for n := syscall.Signal(1); n <= 64; n++ {
		if s.Has(n) && ignoredNow(n) {
			out |= bit(n)
		}
	}
	return out
}

// sigaction is the kernel's struct sigaction on amd64 and arm64.
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

func rtSigaction(n syscall.Signal, act, old *sigaction) syscall.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(n), uintptr(unsafe.Pointer(act)),
		uintptr(unsafe.Pointer(old)), 8, 0, 0)
	return e
}

func ignoredNow(n syscall.Signal) bool {
	var old sigaction
	return rtSigaction(n, nil, &old) == 0 && old.handler == sigIgn
}

// setMask sets the calling thread's mask and returns the one it replaces.
func setMask(m Set) (old Set, err error) {
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&m)),
		uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	if e != 0 {
		return 0, e
	}
	return old, nil
}

// WithMask runs fork on a thread whose mask is blocked (less Runtime) for
// fork's length (a fault of Go code on that thread meanwhile, were SIGSEGV
// among them, would end hinit at once instead of panicking), so that a child forked there starts with that mask: the
// runtime copies the forking thread's mask into the child and exec keeps
// it. When neither blocked nor the inherited mask has a signal in it, the
// thread's mask is already empty and fork just runs.
func WithMask(blocked Set, fork func() error) error {
	if blocked == 0 && inherited.Blocked == 0 {
		return fork()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := setMask(blocked &^ Runtime)
	if err != nil {
		return err
	}
	defer setMask(old)
	return fork()
}

// execIn is the shim's work: the dispositions, then the mask, then exec.
// It returns only when the exec failed, with its errno.
func execIn(st State, path string, argv, env []string, ready func()) syscall.Errno {
	for n := syscall.Signal(1); n <= 64; n++ {
		if n == syscall.SIGKILL || n == syscall.SIGSTOP {
			continue
		}
		switch {
		case st.Ignored.Has(n):
			rtSigaction(n, &sigaction{handler: sigIgn}, nil)
		case ignoredNow(n):
			rtSigaction(n, &sigaction{}, nil) // SIG_DFL
		}
	}
	runtime.LockOSThread() // exec keeps the mask of the thread that calls it
	if _, err := setMask(st.Blocked); err != nil {
		return err.(syscall.Errno)
	}
	if ready != nil {
		ready()
	}
	err := syscall.Exec(path, argv, env)
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EINVAL
}

// ttySignals are the terminal's stop signals, which hinit ignores (SIGTSTP:
// catches) itself, as a PID 1 must: a terminal's background reads and
// writes, or a Ctrl-Z while hinit's group has the foreground (its boot),
// would stop it.
var ttySignals = [3]syscall.Signal{syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

// SetTTY gives SIGTSTP, SIGTTIN and SIGTTOU the dispositions a child that ignores
// ignored starts with (ignored or default) for the fork that follows, and
// returns what puts back the ones it replaced, right after it: a signal
// ignored stays ignored across fork and exec, and one hinit ignores but
// the child must not would otherwise stay so. It talks to the kernel
// directly: os/signal would hand each change to its own locked thread and
// wait for it, several thread switches per start, which a thousand
// services at boot pay a thousand times. Go's own view of the signals
// (ignored, no handler: the fork leaves them as set here) is put back
// exactly, and the runtime installs no handler for them meanwhile. As PID
// 1 the kernel drops a default-action signal to the namespace's init
// anyway, so the window cannot stop hinit; as a subreaper it lasts one
// fork.
//
// SIGTSTP is left alone: hinit catches it (reaper.IgnoreTTYSignals), so
// that it is never at its default in hinit, and a caught signal is the
// child's default after the fork (the runtime resets its handlers there);
// a child that must ignore it starts through the shim, as for any signal
// the runtime handles. SIGTTIN and SIGTTOU must be ignored, not caught: a
// background tcsetattr or write proceeds then, where a caught one would be
// interrupted.
func SetTTY(ignored Set) (restore func(), err error) {
	var old [len(ttySignals)]sigaction
	var set [len(ttySignals)]bool
	undo := func() {
		for i, s := range ttySignals {
			if set[i] {
				rtSigaction(s, &old[i], nil)
			}
		}
	}
	for i, s := range ttySignals {
		if s == syscall.SIGTSTP {
			continue // caught, never at its default here
		}
		var act sigaction // SIG_DFL
		if ignored.Has(s) {
			act.handler = sigIgn
		}
		if e := rtSigaction(s, &act, &old[i]); e != 0 {
			undo()
			return nil, e
		}
		set[i] = true
	}
	return undo, nil
}
