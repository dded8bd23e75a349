package supervise

import (
	"hinit/config"
	"hinit/signame"
	"syscall"
	"time"
)

// State is where a service is (SPEC §3), as status shows it.
type State string

// States of a service.
const (
	StateDown     State = "down"     // not wanted
	StateStarting State = "starting" // spawned, not ready yet
	StateUp       State = "up"       // ready
	StateStopping State = "stopping" // stop signal sent, waiting for the exit
	StateBackoff  State = "backoff"  // waiting to restart
	StateExited   State = "exited"   // ended with a no-restart code or restart: never
	StateFailed   State = "failed"   // gave up; down until someone starts it
)

// Want is what was last asked of a service: up or down.
type Want string

// Wants of a service.
const (
	WantUp   Want = "up"
	WantDown Want = "down"
)

// Exit is how the last run of a service ended.
type Exit struct {
	Code   int            // exit code (when Signal == 0), or the exec failure code 126/127
	Signal syscall.Signal // signal that killed it, or 0
	At     time.Time
	// OOM: a SIGKILL hinit did not send, while the container's cgroup
	// counted an OOM kill that it had not counted at the start
	// (Deps.Cgroup): the kernel's OOM killer, as far as it tells.
	OOM bool
	// PidsLimit: any other failure, while the container's pids limit
	// refused a new process or thread (Deps.Cgroup).
	PidsLimit bool
}

// Status is the run's exit status: its code, or 128+N for signal N.
func (e *Exit) Status() int {
	if e.Signal != 0 {
		return signame.ExitStatus(e.Signal)
	}
	return e.Code
}

// Failed reports whether the run failed: killed by a signal or exited
// non-zero. nil (no run yet) is no failure.
func (e *Exit) Failed() bool { return e != nil && (e.Signal != 0 || e.Code != 0) }

// Status is a snapshot of one service, safe to read from any goroutine.
type Status struct {
	Name      string
	State     State
	Want      Want
	PID       int
	Since     time.Time // when State was entered
	Ready     bool
	Restarts  int   // restarts since the service was registered (a start resets the failures, not this)
	LastExit  *Exit // nil before the first exit
	Reason    string
	Source    config.Source
	LogPath   string // the log file being written; "" before the first start or without log.dir
	LogDir    string // log.dir of the definition as written (may hold ${VAR}); "" without one
	LostLines uint64
	UpSince   time.Time // when the running process was spawned; zero when none runs
	Essential bool
	Protected bool

	// FailingSince is when the current streak of failures began: the
	// first of the consecutive quick failures, or the failing exit that
	// ended it; zero while the service is not failing. Unlike Since it
	// survives the flips between backoff and starting of a crash loop.
	FailingSince time.Time
}

// Running reports whether a process of the service is alive.
func (s Status) Running() bool {
	return s.State == StateStarting || s.State == StateUp || s.State == StateStopping
}

func wantWord(up bool) Want {
	if up {
		return WantUp
	}
	return WantDown
}
