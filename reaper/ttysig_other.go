//go:build !amd64 && !arm64

package reaper

import (
	"os"
	"os/signal"
	"syscall"
)

// On other architectures the kernel's struct sigaction differs, so the
// switch goes through os/signal: catching a signal makes exec reset it.

type ttyDispositions struct{}

var ttyNotes = make(chan os.Signal, 1)

func defaultTTY() (ttyDispositions, error) {
	signal.Notify(ttyNotes, syscall.SIGTTIN, syscall.SIGTTOU)
	return ttyDispositions{}, nil
}

func restoreTTY(*ttyDispositions) { signal.Ignore(syscall.SIGTTIN, syscall.SIGTTOU) }
