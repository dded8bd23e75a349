// Package signame is the one reader and writer of signal names, for
// hinit.yaml's stop.signal, hsvc signal and the control protocol alike: a
// signal is written as an operator writes it (TERM, SIGTERM, term) or as
// its number (15, or 34..64 for the real-time ones). It is a leaf: hsvc
// links it too.
package signame

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUnknown matches (errors.Is) every error of Parse.
var ErrUnknown = errors.New("unknown signal")

// unknownError is a signal Parse does not know, with a message meant for
// the user as it is.
type unknownError string

func (e unknownError) Error() string {
	return fmt.Sprintf("unknown signal %s: use a name like TERM, HUP, USR1 or a number", strconv.Quote(string(e)))
}

func (e unknownError) Is(target error) bool { return target == ErrUnknown }

// Parse reads a signal: a name with or without SIG, in any case, a
// real-time one by SIGRTMIN or SIGRTMAX (RTMIN+6, as Text names it, RTMAX-2,
// as kill -l names the upper half), or a number
// that names a signal (the real-time ones included).
func Parse(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		named := n > 0 && unix.SignalName(syscall.Signal(n)) != ""
		realtime := syscall.Signal(n) >= rtmin && syscall.Signal(n) <= rtmax
		if named || realtime {
			return syscall.Signal(n), nil
		}
		return 0, unknownError(s)
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	if sig := realtime(name); sig != 0 {
		return sig, nil
	}
	return 0, unknownError(s)
}

// realtime reads SIGRTMIN, SIGRTMIN+N, SIGRTMAX and SIGRTMAX-N, within
// rtmin..rtmax; 0 for anything else.
func realtime(name string) syscall.Signal {
	base, rest, dir := rtmin, strings.TrimPrefix(name, "SIGRTMIN"), 1
	if rest == name {
		base, rest, dir = rtmax, strings.TrimPrefix(name, "SIGRTMAX"), -1
		if rest == name {
			return 0
		}
	}
	if rest == "" {
		return base
	}
	sign := "+"
	if dir < 0 {
		sign = "-"
	}
	digits, ok := strings.CutPrefix(rest, sign)
	n, err := strconv.Atoi(digits)
	if !ok || err != nil || n < 0 || digits != strconv.Itoa(n) {
		return 0
	}
	sig := base + syscall.Signal(dir*n)
	if sig < rtmin || sig > rtmax {
		return 0
	}
	return sig
}

// Name is the name of sig without "SIG" (TERM), or its number for a
// signal without a name (a real-time one). Parse reads it back, but for
// 32 and 33, the C library's own, which it refuses.
func Name(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	return strconv.Itoa(int(sig))
}

// Text is how a message names sig: SIGTERM; a real-time signal as kill -l
// names it, SIGRTMIN or SIGRTMIN+6 (unix.SignalName has no name for them);
// any other by its number, SIG32.
func Text(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	switch {
	case sig == rtmin:
		return "SIGRTMIN"
	case sig > rtmin && sig <= rtmax:
		return "SIGRTMIN+" + strconv.Itoa(int(sig-rtmin))
	}
	return "SIG" + strconv.Itoa(int(sig))
}

// rtmin and rtmax are SIGRTMIN and SIGRTMAX as glibc numbers them (the
// kernel's 32 and 33 are the C library's own).
const rtmin, rtmax = syscall.Signal(34), syscall.Signal(64)

// ExitStatus is the exit status that stands for a death by sig, as a
// shell reports it and as hinit passes it on: 128+N.
func ExitStatus(sig syscall.Signal) int { return 128 + int(sig) }

// OfStatus is the signal an exit status stands for by that rule, or 0: only
// 129..159, the signals with names; above those a status is as likely a
// program's own code.
func OfStatus(status int) syscall.Signal {
	if status > 128 && status <= 128+31 {
		return syscall.Signal(status - 128)
	}
	return 0
}
