package pid1

import (
	"context"
	"fmt"
	"path/filepath"

	"hinit/control"
	"hinit/supervise"
)

// listenControl opens the control socket (SPEC §4) for root and the group
// of the image's user, in the background while the boot goes on; serve
// waits for it and starts answering. Requests are only answered once the
// services exist, and before main starts, so main can call hsvc at once.
func (h *hinit) listenControl() (serve func(context.Context)) {
	if h.set.runtimeDir == "" {
		return func(context.Context) {}
	}
	gid := h.userGID()
	path := filepath.Join(h.set.runtimeDir, control.SocketName)
	ready := make(chan *control.Listener, 1)
	go func() {
		ln, err := control.Listen(path, gid)
		if err != nil {
			h.log.Error(fmt.Sprintf("control socket: %v; hsvc will not reach hinit", err))
		}
		ready <- ln
	}()
	return func(ctx context.Context) {
		if ln := <-ready; ln != nil {
			go control.Serve(ctx, ln, h, h.serveGID(gid), h.log)
		}
	}
}

// Handle answers one hsvc request; the control server has already checked
// that the caller is root or in the control group, and the request's form.
func (h *hinit) Handle(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	switch req.Verb {
	case control.VerbStatus:
		return h.status(req.Names)
	case control.VerbList:
		return h.list(req.Prefix)
	case control.VerbCheck:
		return h.check()
	case control.VerbShutdown:
		return h.shutdownRequest(c, req)
	case control.VerbRegister:
		return h.register(ctx, c, req)
	}
	svcs, resp := h.targets(c, req)
	if resp != nil {
		return resp
	}
	switch req.Verb {
	case control.VerbSignal:
		return h.signal(svcs[0], req.Signal)
	case control.VerbWait:
		return h.wait(ctx, svcs[0], req)
	case control.VerbUnregister:
		return h.unregister(ctx, svcs[0], req)
	}
	return h.startStop(ctx, svcs, req)
}

// targets resolves the services a request names (or, with all, the gateway
// instances) and checks the caller may act on each.
func (h *hinit) targets(c control.Caller, req *control.Request) ([]*supervise.Service, *control.Response) {
	var svcs []*supervise.Service
	if req.All {
		for _, s := range h.group.List() {
			if h.isGateway(s.Status()) {
				svcs = append(svcs, s)
			}
		}
	}
	for _, name := range req.Names {
		s := h.group.Get(name)
		if s == nil {
			return nil, control.Errorf(control.CodeNoService, "no such service: %s (hsvc list shows the services)", name)
		}
		svcs = append(svcs, s)
	}
	for _, s := range svcs {
		if !c.May(req.Verb, s.Status().Protected) {
			return nil, control.Errorf(control.CodePermission,
				"permission denied: %s is a protected service; only root may %s it", s.Name(), req.Verb)
		}
	}
	return svcs, nil
}

// isGateway reports whether st is an instance of the gateway template (the
// one reconcile names, else "gateway").
func (h *hinit) isGateway(st supervise.Status) bool {
	return st.Source == "template:"+h.gatewayTemplate()
}

func (h *hinit) gatewayTemplate() string {
	if r := h.set.cfg.Reconcile; r != nil && r.Template != "" {
		return r.Template
	}
	return "gateway"
}

func toControl(st supervise.Status) control.Status {
	out := control.Status{Name: st.Name, State: st.State, Want: st.Want, PID: st.PID, Since: st.Since,
		Ready: st.Ready, Restarts: st.Restarts, Reason: st.Reason, Source: st.Source,
		LogPath: st.LogPath, LostLines: st.LostLines, UpSince: st.UpSince}
	if e := st.LastExit; e != nil {
		out.LastExit = &control.Exit{Code: e.Code, At: e.At}
		if e.Signal != 0 {
			out.LastExit.Code = 128 + int(e.Signal)
			out.LastExit.Signal = control.SignalName(e.Signal)
		}
	}
	return out
}
