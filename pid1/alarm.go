package pid1

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// alarmAt is the bare mode's shutdown deadline while hinit waits for a
// main that has its signal: a kernel timer (setitimer ITIMER_REAL) that
// sends SIGALRM at the deadline, instead of a Go timer. The first Go timer
// of a process starts the runtime's network poller (epoll, an eventfd, a
// thread blocked in it), which on the path from SIGTERM to exit costs more
// than all of hinit's own work there (docs/decisions.md, "The bare mode's
// shutdown deadline is a kernel alarm").
//
// c is catchAlarm's, and gets the SIGALRM. One sent by someone else, even
// before alarmAt, does no harm: the shutdown it starts early still kills
// main only at the deadline. When the kernel refuses the timer, alarmAt
// returns an error and no channel.
func alarmAt(c chan os.Signal, at time.Time) (<-chan os.Signal, error) {
	d := max(time.Until(at), time.Microsecond)
	if _, err := unix.Setitimer(unix.ItimerReal, unix.Itimerval{Value: unix.NsecToTimeval(d.Nanoseconds() + 999)}); err != nil {
		return nil, err
	}
	return c, nil
}

// catchAlarm catches SIGALRM for alarmAt. The bare mode does it at start,
// with the signals it forwards: catching a signal is a round trip to the
// Go runtime's signal thread, which, made when SIGTERM came, competed
// with main's exit on every stop (SIGTERM → gone 1.53× tini's, 1.43×
// caught at start; docs/decisions.md).
func catchAlarm() chan os.Signal {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGALRM)
	return c
}
