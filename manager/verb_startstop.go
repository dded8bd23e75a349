package manager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"hinit/control"
	"hinit/supervise"
)

// settle is how long a service that reached up must stay there before
// start --wait and restart --wait call it started (never longer than the
// wait itself): a gateway that exits 78 a moment after its start must not
// be reported started.
const settle = 2 * time.Second

// startStop applies start, stop or restart to every target, then, with
// wait, waits until each is up (ready, and stayed so) or down. A target
// that cannot take it does not keep it from the others (stop --all
// stopped none after the first that failed): the answer lists every
// failure, and does not wait. A gateway of --all unregistered meanwhile
// is no target any more.
func (m *Manager) startStop(ctx context.Context, svcs []*supervise.Service, req *control.Request) *control.Response {
	var unrecorded, failed []string
	code := control.CodeNoService
	applied := svcs[:0:0]
	for _, s := range svcs {
		rec, err := m.applyDesired(ctx, s, req.Verb, req.Once, func() error {
			switch req.Verb {
			case control.VerbStart:
				if req.Once {
					return s.StartOnce()
				}
				return s.Start()
			case control.VerbOnce:
				return s.Once()
			case control.VerbStop:
				return s.Stop(true)
			case control.VerbRestart:
				return s.Restart()
			}
			return nil
		})
		switch {
		case errors.Is(err, errUnregistered) && req.All:
			continue
		case errors.Is(err, errUnregistered):
			failed = append(failed, fmt.Sprintf("no such service: %s (unregistered meanwhile)", s.Name()))
			continue
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s %s: %v", req.Verb, s.Name(), err))
			code = control.CodeFailed
			continue
		}
		applied = append(applied, s)
		if rec != nil {
			unrecorded = append(unrecorded, s.Name()+": "+rec.Error())
		}
	}
	if len(failed) > 0 {
		return control.Errorf(code, "%s", strings.Join(append(failed, unrecorded...), "; "))
	}
	svcs = applied
	timeout, _ := req.Timeout()
	if timeout == 0 {
		return unrecordedAnswer(req.Verb, unrecorded)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := waiting{until: control.UntilReady, timeout: timeout, started: true, stopping: &m.stopping}
	if req.Verb == control.VerbStop {
		w = waiting{until: control.UntilDown, timeout: timeout, stopping: &m.stopping}
	}
	for _, s := range svcs {
		if resp := w.wait(ctx, s); !resp.OK {
			return resp
		}
	}
	// One settle window for all of them, watched together: one after
	// another, N services took N x settle, and those past the wait's end
	// were never watched at all.
	stayed := make([]*control.Response, len(svcs))
	var wg sync.WaitGroup
	for i, s := range svcs {
		wg.Go(func() { stayed[i] = w.stayed(ctx, s) })
	}
	wg.Wait()
	for _, resp := range stayed {
		if !resp.OK {
			return resp
		}
	}
	return unrecordedAnswer(req.Verb, unrecorded)
}

// waitAny is wait, and for a service whose unregister is under way, a wait
// for down that ends with it (awaitLeft).
func (m *Manager) waitAny(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	name := req.Names[0]
	if req.Until == control.UntilDown && m.group.Get(name) == nil {
		if done := m.dyn.leaveDone(name); done != nil {
			return m.awaitLeft(ctx, name, done, req)
		}
	}
	return m.onOne(m.wait)(ctx, c, req)
}

func (m *Manager) wait(ctx context.Context, _ control.Caller, s *supervise.Service, req *control.Request) *control.Response {
	timeout, _ := req.Timeout()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return waiting{until: req.Until, timeout: timeout, notPID: req.NotPID, patient: req.Patient, stopping: &m.stopping}.wait(ctx, s)
}

// waiting is one wait for a state: until (up, ready, down) within timeout
// (0: none; ctx carries it). started marks the wait of start and restart,
// for which backoff is a failure too. notPID, when not 0, is a process that
// does not count: s6-svc -wr waits for a new one. patient is s6-svwait's:
// never hopeless, and backoff counts as down. stopping is the manager's:
// a wait the shutdown ends says so.
type waiting struct {
	until    string
	timeout  time.Duration
	started  bool
	notPID   int
	patient  bool
	stopping *atomic.Bool
}

// wait blocks until s reaches w.until, ctx ends, or the state shows it
// will not get there.
func (w waiting) wait(ctx context.Context, s *supervise.Service) *control.Response {
	st, err := s.WaitFor(ctx, func(st supervise.Status) bool { return w.reached(st) || w.hopeless(st) })
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return control.Errorf(control.CodeTimeout, "timed out after %v waiting for %s to be %s (it is %s); see hsvc status %s",
			w.timeout, s.Name(), w.until, st.State, s.Name())
	case errors.Is(err, context.Canceled) || errors.Is(err, supervise.ErrRemoved) && w.stopping.Load():
		// hinit exits (or nobody is left to read this), or the shutdown
		// ended the service's supervision
		return control.Errorf(control.CodeFailed, "%s is %s: the container is shutting down", s.Name(), st.State)
	case err != nil:
		return control.Errorf(control.CodeFailed, "waiting for %s: %v", s.Name(), err)
	case !w.reached(st):
		return control.Errorf(control.CodeFailed, "%s is %s: %s", s.Name(), st.State, st.Reason)
	}
	return control.OK()
}

// reached reports whether st is what w waits for. A patient wait (s6's)
// takes a service backing off for down: no process runs.
func (w waiting) reached(st supervise.Status) bool {
	if w.patient && w.until == control.UntilDown && st.State == supervise.StateBackoff {
		return true
	}
	return reached(st, w.until) && (w.notPID == 0 || st.PID != w.notPID)
}

// stayed checks that a service that reached up stays there for settle,
// or until ctx's deadline (the wait's end) when that comes first.
func (w waiting) stayed(ctx context.Context, s *supervise.Service) *control.Response {
	if w.until == control.UntilDown {
		return control.OK() // down stays down until someone asks otherwise
	}
	sctx, cancel := context.WithTimeout(ctx, settle)
	defer cancel()
	st, err := s.WaitFor(sctx, func(st supervise.Status) bool { return !reached(st, w.until) })
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return control.OK() // still there when the settle time or the wait ended
	case err != nil:
		return control.Errorf(control.CodeFailed, "waiting for %s: %v", s.Name(), err)
	}
	return control.Errorf(control.CodeFailed, "%s is %s: %s", s.Name(), st.State, st.Reason)
}

// reached reports whether st is what a wait for until asked for.
func reached(st supervise.Status, until string) bool {
	switch until {
	case control.UntilUp:
		return st.State == supervise.StateStarting || st.State == supervise.StateUp
	case control.UntilReady:
		return st.State == supervise.StateUp
	case control.UntilGone: // no process, a finish program may run
		return st.PID == 0 && st.State != supervise.StateStarting && st.State != supervise.StateUp
	default: // down
		return !st.Running() && st.State != supervise.StateBackoff
	}
}

// hopeless reports whether a service waited on to come up has ended up
// where it will stay without another request; for start and restart,
// backing off counts too: it came up and fell. Want down is hopeless only
// once nothing runs: a service started for one run (s6-svc -o, start
// --once) wants down while it starts and may still get up. A patient wait
// is never hopeless: someone else may start the service (s6-svwait -u, then
// s6-svc -u).
func (w waiting) hopeless(st supervise.Status) bool {
	if w.patient || w.until == control.UntilDown || w.until == control.UntilGone {
		return false
	}
	return st.Want == "down" && !st.Running() || st.State == supervise.StateFailed || st.State == supervise.StateExited ||
		w.started && st.State == supervise.StateBackoff
}
