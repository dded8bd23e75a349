package pid1

import (
	"context"
	"errors"

	"hinit/control"
	"hinit/supervise"
)

// startStop applies start, stop or restart to every target, then, with
// wait, waits until each is up (ready) or down.
func (h *hinit) startStop(ctx context.Context, svcs []*supervise.Service, req *control.Request) *control.Response {
	for _, s := range svcs {
		h.recordDesired(s, req.Verb)
		var err error
		switch req.Verb {
		case control.VerbStart:
			if req.Once {
				err = s.StartOnce()
			} else {
				err = s.Start()
			}
		case control.VerbOnce:
			err = s.Once()
		case control.VerbStop:
			err = s.Stop(true)
		case control.VerbRestart:
			err = s.Restart()
		}
		if err != nil {
			return control.Errorf(control.CodeFailed, "%s %s: %v", req.Verb, s.Name(), err)
		}
	}
	if req.Wait == "" {
		return control.OK()
	}
	until := control.UntilReady
	if req.Verb == control.VerbStop {
		until = control.UntilDown
	}
	for _, s := range svcs {
		if resp := h.waitUntil(ctx, s, until, req); !resp.OK {
			return resp
		}
	}
	return control.OK()
}

func (h *hinit) wait(ctx context.Context, s *supervise.Service, req *control.Request) *control.Response {
	return h.waitUntil(ctx, s, req.Until, req)
}

// waitUntil blocks until s reaches until (up, ready, down), the request's
// timeout passes, or the state shows it will not get there.
func (h *hinit) waitUntil(ctx context.Context, s *supervise.Service, until string, req *control.Request) *control.Response {
	timeout, _ := req.Timeout()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	st, err := s.WaitFor(ctx, func(st supervise.Status) bool {
		return (reached(st, until) && (req.NotPID == 0 || st.PID != req.NotPID)) || hopeless(st, until)
	})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return control.Errorf(control.CodeTimeout, "timed out after %v waiting for %s to be %s (it is %s); see hsvc status %s",
			timeout, s.Name(), until, st.State, s.Name())
	case err != nil:
		return control.Errorf(control.CodeFailed, "waiting for %s: %v", s.Name(), err)
	case !reached(st, until) || req.NotPID != 0 && st.PID == req.NotPID:
		return control.Errorf(control.CodeFailed, "%s is %s: %s", s.Name(), st.State, st.Reason)
	}
	return control.OK()
}

// reached reports whether st is what a wait for until asked for.
func reached(st supervise.Status, until string) bool {
	switch until {
	case control.UntilUp:
		return st.State == supervise.StateStarting || st.State == supervise.StateUp
	case control.UntilReady:
		return st.State == supervise.StateUp
	default: // down
		return !st.Running() && st.State != supervise.StateBackoff
	}
}

// hopeless reports whether a service waited on to come up has ended up
// where it will stay without another request.
func hopeless(st supervise.Status, until string) bool {
	if until == control.UntilDown {
		return false
	}
	return st.Want == "down" || st.State == supervise.StateFailed || st.State == supervise.StateExited
}
