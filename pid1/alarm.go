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
// The returned channel gets the SIGALRM. One sent by someone else before
// the deadline does no harm: the shutdown it starts early still kills main
// only at the deadline. When the kernel refuses the timer, alarmAt
// returns an error and no channel.
func alarmAt(at time.Time) (<-chan os.Signal, error) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGALRM)
	d := max(time.Until(at), time.Microsecond)
	if _, err := unix.Setitimer(unix.ItimerReal, unix.Itimerval{Value: unix.NsecToTimeval(d.Nanoseconds() + 999)}); err != nil {
		signal.Stop(c)
		return nil, err
	}
	return c, nil
}
