package supervise

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"time"

	"hinit/launch"
)

// readiness prepares how the instance reports ready: a notify pipe placed
// at the child's fd notify_fd, a TCP probe, or a delay. It returns the
// parent's copy of the pipe's write end, to close once the child exists.
// Without a ready setting inst.ready stays nil: ready when spawned.
func (r *runner) readiness(ctx context.Context, inst *instance, files *[]uintptr) (*os.File, error) {
	rd := inst.def.Ready
	switch {
	case rd.NotifyFD > launch.MaxFD: // hinit.yaml and the scandir refuse it; a definition built elsewhere too
		return nil, fmt.Errorf("ready.notify_fd %d is too large, expected at most %d", rd.NotifyFD, launch.MaxFD)
	case rd.NotifyFD > 0:
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		for len(*files) <= rd.NotifyFD {
			*files = append(*files, ^uintptr(0)) // -1: closed in the child
		}
		(*files)[rd.NotifyFD] = pw.Fd()
		inst.ready = make(chan struct{})
		go awaitNewline(ctx, pr, inst.ready)
		return pw, nil
	case rd.TCP != "":
		ap, err := probeAddr(rd.TCP)
		if err != nil {
			return nil, err
		}
		inst.ready = make(chan struct{})
		go awaitTCP(ctx, ap, inst.ready)
	case rd.Delay > 0:
		inst.ready = make(chan struct{})
		go awaitDelay(ctx, rd.Delay, inst.ready)
	}
	return nil, nil
}

// awaitNewline closes ready when a newline arrives on the notify pipe (the
// s6 notification-fd protocol). EOF without one means never ready. It ends
// with its instance (ctx) too: a process the service left behind (in a
// session of its own, out of reach of the group kill) may hold the pipe's
// write end for ever, and each restart would leave PID 1 one more
// descriptor and goroutine.
func awaitNewline(ctx context.Context, pr *os.File, ready chan struct{}) {
	defer pr.Close()
	stop := context.AfterFunc(ctx, func() { pr.Close() }) // ends the Read
	defer stop()
	buf := make([]byte, 64)
	for {
		n, err := pr.Read(buf)
		if bytes.IndexByte(buf[:n], '\n') >= 0 {
			close(ready)
			return
		}
		if err != nil {
			return
		}
	}
}

// The tcp probe's intervals: doubling from 10 ms to probeFastMax for the
// first probeFastFor, when a service usually begins to listen; past that
// on to probeSlowMax, so that a service that never listens (a port that is
// not its own) costs PID 1 a wake-up a minute, not two a second, for as
// long as it runs. Variables for tests only.
var (
	probeFastMax = 500 * time.Millisecond
	probeFastFor = 30 * time.Second
	probeSlowMax = time.Minute
	probeDial    = dialTCP
)

// awaitTCP closes ready once addr accepts a connection. It probes with a
// growing interval until the instance ends: a probe only runs while a
// service is starting, never when it is up.
func awaitTCP(ctx context.Context, ap netip.AddrPort, ready chan struct{}) {
	start := time.Now()
	wait := 10 * time.Millisecond
	for {
		if probeDial(ctx, ap, time.Second) == nil {
			close(ready)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		limit := probeFastMax
		if time.Since(start) >= probeFastFor {
			limit = probeSlowMax
		}
		wait = min(wait*2, limit)
	}
}

func awaitDelay(ctx context.Context, d time.Duration, ready chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
		close(ready)
	}
}
