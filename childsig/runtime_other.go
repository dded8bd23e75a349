//go:build !(linux && (amd64 || arm64))

package childsig

import (
	"os"
	"os/signal"
	"syscall"
)

// Elsewhere the runtime's record and the kernel's struct sigaction are not
// read: children start with what a fork and an exec give them.

func Inherited() State                        { return Default }
func Ignoring(Set) Set                        { return 0 }
func WithMask(_ Set, fork func() error) error { return fork() }
func execIn(State, string, []string, []string, func()) syscall.Errno {
	return syscall.Errno(syscall.ENOSYS)
}

var ttyNotes = make(chan os.Signal, 1)

// SetTTY makes SIGTSTP, SIGTTIN and SIGTTOU default in a child forked
// before restore by catching them (a caught signal is reset by exec), and
// restore ignores them again, as hinit does: the kernel's struct sigaction
// is not written here, so a child never inherits the three ignored.
func SetTTY(Set) (restore func(), err error) {
	signal.Notify(ttyNotes, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	return func() { signal.Ignore(syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU) }, nil
}
