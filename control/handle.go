package control

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// decode turns one request line into a request, or into the response that
// refuses it: permission, decoding, validation. It never panics, whatever
// line holds.
func (s *Server) decode(c Caller, line []byte) (*Request, *Response) {
	if !c.Root && !c.Member {
		s.warn.Warn("control: permission denied", c.UID, "pid", c.PID)
		g := s.group.Load().name
		return nil, Errorf(CodePermission, "permission denied: uid %d is not in the control group (%s); run hsvc as the %s user or root", c.UID, g, g)
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, Errorf(CodeUsage, "malformed request: %v", err)
	}
	if err := req.Validate(); err != nil {
		return nil, Errorf(CodeUsage, "%v", err)
	}
	return &req, nil
}

// long reports whether req may keep its connection open for long (the verb
// wait, or a verb told to wait): such requests hold a wait, not a request
// slot.
func (r *Request) long() bool {
	return r.Verb == VerbWait || r.Wait != ""
}

// handle runs a decoded request through the Handler and makes its answer
// consistent.
func (s *Server) handle(ctx context.Context, c Caller, req *Request) *Response {
	resp := normalize(s.call(ctx, c, req), req.Verb)
	s.Log.Debug("control: request", "verb", req.Verb, "uid", c.UID, "pid", c.PID, "code", resp.Code)
	return resp
}

// call runs the Handler, turning a panic into a failed response so that
// the caller still gets its one line.
func (s *Server) call(ctx context.Context, c Caller, req *Request) (resp *Response) {
	defer func() {
		if r := recover(); r != nil {
			s.Log.Error("control: panic in handler", "verb", req.Verb, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			resp = Errorf(CodeFailed, "hinit failed on %s: internal error, see hinit's log", req.Verb)
		}
	}()
	return s.Handler.Handle(ctx, c, req)
}
