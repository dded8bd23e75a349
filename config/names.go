package config

import (
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// SignalByName returns the Linux signal named name, with or without the
// "SIG" prefix, in any case: "TERM", "SIGTERM" and "term" are SIGTERM.
// Numbers are not names and are refused.
func SignalByName(name string) (syscall.Signal, error) {
	upper := strings.ToUpper(name)
	if !strings.HasPrefix(upper, "SIG") {
		upper = "SIG" + upper
	}
	if sig := unix.SignalNum(upper); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("signal %q: %w", name, ErrUnknownSignal)
}

// signalName is the name of sig without "SIG", as Stop.Signal holds it.
func signalName(sig syscall.Signal) string {
	return strings.TrimPrefix(unix.SignalName(sig), "SIG")
}
