package control

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// handle turns one request line into a response: permission, decoding,
// validation, then the Handler. It never panics, whatever line holds.
func (s *Server) handle(ctx context.Context, c Caller, line []byte) *Response {
	if !c.Root && !c.Member {
		s.Log.Warn("control: permission denied", "uid", c.UID, "pid", c.PID)
		return Errorf(CodePermission, "permission denied: uid %d is not in the control group (%s); run hsvc as the %s user or root", c.UID, s.group, s.group)
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return Errorf(CodeUsage, "malformed request: %v", err)
	}
	if err := req.Validate(); err != nil {
		return Errorf(CodeUsage, "%v", err)
	}
	resp := normalize(s.call(ctx, c, &req), req.Verb)
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
