package pid1

import (
	"errors"
	"slices"
	"strings"
	"time"

	"hinit/config"
	"hinit/control"
	"hinit/reconcile"
	"hinit/supervise"
	"hinit/svclog"
)

func (h *hinit) status(names []string) *control.Response {
	resp := control.OK()
	var env map[string]string
	add := func(st supervise.Status) {
		cs := toControl(st)
		if cs.LogPath == "" && st.LogDir != "" {
			// Not started yet: where its log will be, as its next
			// start would expand log.dir (read once per request).
			if env == nil {
				env = h.containerEnv()
			}
			cs.LogPath = svclog.CurrentPath(config.Expand(st.LogDir, env))
		}
		resp.Services = append(resp.Services, cs)
	}
	if len(names) == 0 {
		for _, s := range h.group.List() {
			add(s.Status())
		}
		for _, st := range h.dyn.noted() {
			add(st)
		}
		return resp
	}
	for _, name := range names {
		if s := h.group.Get(name); s != nil {
			add(s.Status())
		} else if st, ok := h.dyn.notedAs(name); ok {
			add(st)
		} else {
			return control.Errorf(control.CodeNoService, "no such service: %s (hsvc list shows the services)", name)
		}
	}
	return resp
}

func (h *hinit) list(prefix string) *control.Response {
	resp := control.OK()
	resp.Names = []string{}
	for _, s := range h.group.List() {
		if strings.HasPrefix(s.Name(), prefix) {
			resp.Names = append(resp.Names, s.Name())
		}
	}
	slices.Sort(resp.Names)
	return resp
}

// check is the health probe: hinit answers and no essential service failed.
func (h *hinit) check() *control.Response {
	if h.stopping.Load() {
		return control.Errorf(control.CodeFailed, "the container is shutting down")
	}
	var sts []supervise.Status
	for _, s := range h.group.List() {
		st := s.Status()
		sts = append(sts, st)
		if st.Essential && (st.State == supervise.StateFailed || st.State == supervise.StateExited) {
			return control.Errorf(control.CodeFailed, "essential service %s is %s: %s", st.Name, st.State, st.Reason)
		}
	}
	// Temporary wiring (issue 13 item 6) until the check moves to manager.
	if err := reconcile.CheckGateways(sts, h.gatewayTemplate(), time.Now(), h.set.checkGrace); err != nil {
		return control.Errorf(control.CodeFailed, "%v", err)
	}
	return control.OK()
}

func (h *hinit) shutdownRequest(c control.Caller, req *control.Request) *control.Response {
	if !c.May(control.VerbShutdown, false) {
		return control.Errorf(control.CodePermission, "permission denied: only root may shut the container down")
	}
	code := -1 // main's own exit status decides
	if req.ExitCode != nil {
		code = *req.ExitCode
	}
	select {
	case h.stopRequest <- code:
	default: // a shutdown is already on its way
	}
	return control.OK()
}

func (h *hinit) signal(s *supervise.Service, name string) *control.Response {
	sig, err := control.ParseSignal(name)
	if err != nil {
		return control.Errorf(control.CodeUsage, "%v", err)
	}
	if err := s.Signal(sig); err != nil {
		if errors.Is(err, supervise.ErrNotRunning) {
			return control.Errorf(control.CodeFailed, "%s is not running; start it first (hsvc start %s)", s.Name(), s.Name())
		}
		return control.Errorf(control.CodeFailed, "%s: %v", s.Name(), err)
	}
	return control.OK()
}
