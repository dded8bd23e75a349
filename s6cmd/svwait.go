package s6cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"hinit/control"
)

const svwaitSynopsis = "[ -U | -u | -d | -D | -r | -R ] [ -a | -o ] [ -t timeout ] servicedir..."

// runSvwait is s6-svwait: wait until all (-a, the default) or one (-o) of
// the services reach the state; -t bounds the wait in milliseconds (exit
// 99 when it runs out).
func runSvwait(e *env, args []string) int {
	opts, dirs, ok := getopt(args, "UudDrRao", "t")
	if !ok || len(dirs) == 0 {
		return e.usage(svwaitSynopsis)
	}
	what, one := "u", false
	var timeout time.Duration
	for _, o := range opts {
		switch o.c {
		case 'a':
			one = false
		case 'o':
			one = true
		case 't':
			ms, err := strconv.ParseUint(o.val, 10, 32)
			if err != nil {
				return e.usage(svwaitSynopsis)
			}
			timeout = time.Duration(ms) * time.Millisecond
		default:
			what = string(o.c)
		}
	}
	ctx := e.ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan int, len(dirs))
	for _, dir := range dirs {
		go func() { results <- e.waitOne(ctx, dir, what) }()
	}
	code := exitOK
	for range dirs {
		c := <-results
		switch {
		case one && c == exitOK:
			return exitOK
		case c != exitOK && code == exitOK:
			code = c
			if !one {
				cancel()
			}
		}
	}
	if code == exitTimeout {
		return e.fatal(exitTimeout, "timed out")
	}
	return code
}

// waitOne waits for the service of dir to reach what, until ctx ends.
func (e *env) waitOne(ctx context.Context, dir, what string) int {
	if err := checkDir(dir); err != nil && !e.isStatic(dir) {
		return e.fatal(exitSystem, "unable to subscribe to events for %s: %s", dir, errText(err))
	}
	w := svcWaits[what]
	if neverReady(dir, w.until) {
		<-ctx.Done() // -t, or another dir of -o
		return exitTimeout
	}
	notPID := 0
	sub := *e
	sub.ctx = ctx
	if w.restart {
		st, err := sub.status(dir)
		if err != nil {
			return e.waitFailed(dir, err)
		}
		notPID = st.PID
	}
	resp, err := sub.call(&control.Request{Verb: control.VerbWait, Names: []string{serviceName(dir)},
		Until: w.until, NotPID: notPID, Patient: true})
	switch {
	case ctx.Err() != nil:
		return exitTimeout
	case err != nil:
		return e.waitFailed(dir, err)
	case !resp.OK:
		return e.fatal(exitFalse, "%s: %s", dir, resp.Error)
	}
	return exitOK
}

func (e *env) waitFailed(dir string, err error) int {
	if errors.Is(err, errNoSupervisor) {
		return e.fatal(exitUsage, "unable to subscribe to events for %s: supervisor not listening", dir)
	}
	return e.fatal(exitSystem, "%s", fmt.Sprintf("unable to subscribe to events for %s: %s", dir, errText(err)))
}
