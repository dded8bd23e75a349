package s6cmd

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"hinit/control"
)

const svcSynopsis = "[ -wu | -wU | -wd | -wD | -wr | -wR ] [ -T timeout ] [ -abqhkti12pcyroduDUxOQ ] servicedir"

// svcSignals are the s6-svc letters that send a signal.
var svcSignals = map[byte]string{'a': "ALRM", 'b': "ABRT", 'q': "QUIT", 'h': "HUP", 'k': "KILL",
	't': "TERM", 'i': "INT", '1': "USR1", '2': "USR2", 'p': "STOP", 'c': "CONT", 'y': "WINCH"}

// svcWaits maps -w's letter to what is waited for, and whether it waits
// for another process than the one running now.
var svcWaits = map[string]struct {
	until   string
	restart bool
}{
	"u": {control.UntilUp, false}, "U": {control.UntilReady, false},
	"d": {control.UntilGone, false}, "D": {control.UntilDown, false},
	"r": {control.UntilUp, true}, "R": {control.UntilReady, true},
}

// runSvc is s6-svc: the commands in the order given, then the wait.
func runSvc(e *env, args []string) int {
	opts, dirs, ok := getopt(args, "abqhkti12pcyroduDUxOQ", "wT")
	if !ok || len(dirs) == 0 {
		return e.usage(svcSynopsis)
	}
	var wait, timeout string
	var cmds []byte
	for _, o := range opts {
		switch o.c {
		case 'w':
			if _, ok := svcWaits[o.val]; !ok {
				return e.usage(svcSynopsis)
			}
			wait = o.val
		case 'T':
			ms, err := strconv.ParseUint(o.val, 10, 32)
			if err != nil {
				return e.usage(svcSynopsis)
			}
			timeout = (time.Duration(ms) * time.Millisecond).String()
		default:
			cmds = append(cmds, o.c)
		}
	}
	for _, dir := range dirs {
		if code := e.svcOne(dir, cmds, wait, timeout); code != exitOK {
			return code
		}
	}
	return exitOK
}

// svcOne applies cmds to the service of dir and waits as -w asks.
func (e *env) svcOne(dir string, cmds []byte, wait, timeout string) int {
	if err := checkDir(dir); err != nil && !e.isStatic(dir) {
		return e.fatal(exitSystem, "unable to control %s: %s", dir, errText(err))
	}
	name := serviceName(dir)
	notPID := 0
	if w, ok := svcWaits[wait]; ok && w.restart {
		st, err := e.status(dir)
		if err != nil {
			return e.controlFailed(dir, err)
		}
		notPID = st.PID
	}
	for _, c := range cmds {
		if err := e.svcCommand(dir, name, c); err != nil {
			return e.controlFailed(dir, err)
		}
	}
	if wait == "" {
		return exitOK
	}
	until := svcWaits[wait].until
	if neverReady(dir, until) {
		// s6-svc, unlike s6-svwait, falls back to up (-wU) or
		// restarted (-wR) with this warning (s6 2.11.3).
		fmt.Fprintf(e.stderr, "%s: warning: %s/notification-fd not present - ignoring request for readiness notification\n", e.prog, dir)
		until = control.UntilUp
	}
	// s6-svc waits through s6-svlisten1, or s6-svwait when it sends
	// nothing: both wait for the state or -T, a service down by choice
	// included (a dir removed meanwhile ends hinit's wait with 1).
	waiter := "s6-svlisten1"
	if len(cmds) == 0 {
		waiter = "s6-svwait"
	}
	resp, err := e.call(&control.Request{Verb: control.VerbWait, Names: []string{name},
		Until: until, Wait: timeout, NotPID: notPID, Patient: true})
	switch {
	case err != nil:
		return e.controlFailed(dir, err)
	case resp.Code == control.CodeTimeout:
		fmt.Fprintf(e.stderr, "%s: fatal: timed out\n", waiter)
		return exitTimeout
	case !resp.OK:
		return e.fatal(exitFalse, "%s: %s", dir, resp.Error)
	}
	return exitOK
}

// controlFailed prints s6-svc's message for err and returns its code.
func (e *env) controlFailed(dir string, err error) int {
	if errors.Is(err, errNoSupervisor) {
		return e.fatal(exitUsage, "unable to control %s: supervisor not listening", dir)
	}
	return e.fatal(exitSystem, "unable to control %s: %s", dir, errText(err))
}

// svcCommand sends one s6-svc command letter as a control request.
func (e *env) svcCommand(dir, name string, c byte) error {
	req := &control.Request{Names: []string{name}}
	switch c {
	case 'u', 'U':
		req.Verb = control.VerbStart
	case 'd', 'D':
		req.Verb = control.VerbStop
	case 'o':
		req.Verb, req.Once = control.VerbStart, true
	case 'O', 'Q':
		req.Verb = control.VerbOnce
	case 'x':
		return nil // hinit keeps supervising while the dir exists; removing it forgets the service
	case 'r':
		// "": the down-signal of the definition running, which hinit
		// read from the dir (and a stop sends), or a service.yaml's
		// stop.signal: one rule, hinit's.
		return e.svcSignal(dir, name, "", true)
	case 't':
		return e.svcSignal(dir, name, svcSignals[c], true)
	default:
		return e.svcSignal(dir, name, svcSignals[c], false)
	}
	resp, err := e.call(req)
	if err != nil {
		return err
	}
	if !resp.OK && resp.Unrecorded {
		// Done; only its desired_state for the next boot is not
		// recorded. Real s6 records none: hermes writes it itself
		// after a 0, and its writer mends a damaged file.
		fmt.Fprintf(e.stderr, "s6-svc: warning: %s: %s\n", dir, resp.Error)
		return nil
	}
	if !resp.OK {
		return errors.New(resp.Error)
	}
	return nil
}

// svcSignal signals the service's process, when one runs, and not its
// process group, as s6-supervise does: s6 ignores a signal command for a
// service that is down. restart marks -t and -r, the letters of a restart
// (hermes gateway restart is s6-svc -t): the exit they cause starts the
// service again at once, as s6 does, and is no failure towards backoff
// and give_up.
func (e *env) svcSignal(dir, name, sig string, restart bool) error {
	st, err := e.status(dir)
	if err != nil {
		return err
	}
	if st.PID == 0 {
		return nil
	}
	resp, err := e.call(&control.Request{Verb: control.VerbSignal, Names: []string{name}, Signal: sig, Process: true, Restart: restart})
	if err != nil {
		return err
	}
	if !resp.OK && resp.Code != control.CodeFailed { // failed: it exited meanwhile
		return errors.New(resp.Error)
	}
	return nil
}
