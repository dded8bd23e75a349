//go:build !(linux && (amd64 || arm64))

package childsig

import (
	"syscall"
)

// Elsewhere the runtime's record and the kernel's struct sigaction are not
// read: children start with what a fork and an exec give them.

func Inherited() State                        { return Default }
func Ignoring(Set) Set                        { return 0 }
func WithMask(_ Set, fork func() error) error { return fork() }
func execIn(State, string, []string, []string) syscall.Errno {
	return syscall.Errno(syscall.ENOSYS)
}
