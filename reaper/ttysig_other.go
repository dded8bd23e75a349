//go:build !amd64 && !arm64

package reaper

import (
	"os"
	"os/signal"
	"syscall"

	"hinit/childsig"
)

// On other architectures the kernel's struct sigaction differs, so the
// switch goes through os/signal: catching a signal makes exec reset it.
// Children always get the defaults there, whatever was inherited.

type ttyDispositions struct{}

var ttyNotes = make(chan os.Signal, 1)

func ttyFor(childsig.Set) *ttyDispositions { return &ttyDispositions{} }

func setTTY(*ttyDispositions) (ttyDispositions, error) {
	signal.Notify(ttyNotes, syscall.SIGTTIN, syscall.SIGTTOU)
	return ttyDispositions{}, nil
}

func restoreTTY(*ttyDispositions) { signal.Ignore(syscall.SIGTTIN, syscall.SIGTTOU) }
