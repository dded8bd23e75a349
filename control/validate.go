package control

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"hinit/svcname"
)

// ErrInvalid matches (errors.Is) every error of Validate and ParseSignal:
// the request is malformed, and retrying it unchanged cannot help.
var ErrInvalid = errors.New("invalid request")

// invalidError is a validation error whose message is meant for the user
// as it is, without a prefix; it matches ErrInvalid.
type invalidError string

func (e invalidError) Error() string        { return string(e) }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, a ...any) error {
	return invalidError(fmt.Sprintf(format, a...))
}

// ValidName reports whether name may name a service (SPEC §3).
func ValidName(name string) bool {
	return svcname.Valid(name)
}

// Validate checks what can be checked without the supervisor: version,
// verb, and the shape of the fields the verb uses. The server answers a
// request that fails it with CodeUsage, so handlers can rely on it.
func (r *Request) Validate() error {
	if r.V != Version {
		return invalidf("protocol version %d, this hinit speaks %d: use the hsvc that came with this image", r.V, Version)
	}
	check, ok := verbChecks[r.Verb]
	if !ok {
		return invalidf("unknown verb %q", r.Verb)
	}
	for _, n := range r.Names {
		if !ValidName(n) {
			return invalidf("invalid service name %q: names match %s", n, svcname.Rule)
		}
	}
	if _, err := r.Timeout(); err != nil {
		return err
	}
	return check(r)
}

// Timeout is the request's wait as a duration (0 when empty); see the
// protocol comment for what 0 means for each verb.
func (r *Request) Timeout() (time.Duration, error) {
	if r.Wait == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(r.Wait)
	if err != nil || d < 0 {
		return 0, invalidf("wait %q is not a duration like 30s or 2m", r.Wait)
	}
	return d, nil
}

// verbChecks holds the per-verb checks of Validate.
var verbChecks = map[string]func(*Request) error{
	VerbStatus:     func(*Request) error { return nil },
	VerbStart:      namesOrAll,
	VerbStop:       namesOrAll,
	VerbRestart:    namesOrAll,
	VerbSignal:     checkSignal,
	VerbRegister:   checkRegister,
	VerbUnregister: oneName,
	VerbList:       func(*Request) error { return nil },
	VerbWait:       checkWait,
	VerbCheck:      func(*Request) error { return nil },
	VerbShutdown:   checkShutdown,
	VerbOnce:       namesOrAll,
}

func namesOrAll(r *Request) error {
	switch {
	case r.All && len(r.Names) > 0:
		return invalidf("%s: give service names or all, not both", r.Verb)
	case !r.All && len(r.Names) == 0:
		return invalidf("%s: no service named: give names or all", r.Verb)
	}
	return nil
}

func oneName(r *Request) error {
	if len(r.Names) != 1 {
		return invalidf("%s takes exactly one service name, got %d", r.Verb, len(r.Names))
	}
	return nil
}

func checkSignal(r *Request) error {
	if err := oneName(r); err != nil {
		return err
	}
	_, err := ParseSignal(r.Signal)
	return err
}

func checkRegister(r *Request) error {
	if !ValidName(r.Template) || !ValidName(r.Instance) || !ValidName(r.Template+"-"+r.Instance) {
		return invalidf("register: template %q and instance %q must be valid names", r.Template, r.Instance)
	}
	for k := range r.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return invalidf("register: invalid environment variable name %q", k)
		}
	}
	return nil
}

func checkWait(r *Request) error {
	if err := oneName(r); err != nil {
		return err
	}
	switch r.Until {
	case UntilUp, UntilReady, UntilDown:
		return nil
	}
	return invalidf("wait: until must be up, ready or down, not %q", r.Until)
}

func checkShutdown(r *Request) error {
	if r.ExitCode != nil && (*r.ExitCode < 0 || *r.ExitCode > 255) {
		return invalidf("shutdown: exit code %d is not in 0..255", *r.ExitCode)
	}
	return nil
}

// ParseSignal reads a signal as an operator writes it: TERM, SIGTERM, term
// or 15. Both hsvc (for a usage error before any request) and the server
// use it, so they agree on what a signal name is.
func ParseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		named := n > 0 && unix.SignalName(syscall.Signal(n)) != ""
		realtime := n >= 34 && n <= 64 // SIGRTMIN..SIGRTMAX as glibc numbers them
		if named || realtime {
			return syscall.Signal(n), nil
		}
		return 0, invalidf("unknown signal %s", s)
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, invalidf("unknown signal %q: use a name like TERM, HUP, USR1 or a number", s)
}

// SignalName is the name of sig without "SIG" (TERM), as Exit.Signal
// carries it; a number for signals without a name (real-time ones).
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	return strconv.Itoa(int(sig))
}
