package supervise

import (
	"syscall"
	"time"
)

// States of a service (SPEC §3).
const (
	StateDown     = "down"     // not wanted
	StateStarting = "starting" // spawned, not ready yet
	StateUp       = "up"       // ready
	StateStopping = "stopping" // stop signal sent, waiting for the exit
	StateBackoff  = "backoff"  // waiting to restart
	StateExited   = "exited"   // ended with a no-restart code or restart: never
	StateFailed   = "failed"   // gave up; down until someone starts it
)

// Exit is how the last run of a service ended.
type Exit struct {
	Code   int            // exit code (when Signal == 0), or the exec failure code 126/127
	Signal syscall.Signal // signal that killed it, or 0
	At     time.Time
}

// Status is a snapshot of one service, safe to read from any goroutine.
type Status struct {
	Name      string
	State     string
	Want      string // "up" or "down"
	PID       int
	Since     time.Time // when State was entered
	Ready     bool
	Restarts  int   // restarts since the last requested start
	LastExit  *Exit // nil before the first exit
	Reason    string
	Source    string // "static", "scandir", "template:<name>"
	LogPath   string
	LostLines uint64
	UpSince   time.Time // when the running process was spawned; zero when none runs
	Essential bool
	Protected bool
}

// Running reports whether a process of the service is alive.
func (s Status) Running() bool {
	return s.State == StateStarting || s.State == StateUp || s.State == StateStopping
}

func wantWord(up bool) string {
	if up {
		return "up"
	}
	return "down"
}
