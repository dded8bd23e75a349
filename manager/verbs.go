package manager

import (
	"context"

	"hinit/control"
	"hinit/signame"
	"hinit/supervise"
)

// handlers binds a handler to every verb of control's table. The verbs
// that act on services get them resolved by the table entry's rule: one
// name (never all) or names-or-all.
func (m *Manager) handlers() map[string]control.HandlerFunc {
	return map[string]control.HandlerFunc{
		control.VerbStatus:     m.status,
		control.VerbList:       m.list,
		control.VerbCheck:      m.check,
		control.VerbShutdown:   m.shutdownRequest,
		control.VerbRegister:   m.register,
		control.VerbStart:      m.onTargets(m.startStop),
		control.VerbStop:       m.onTargets(m.startStop),
		control.VerbRestart:    m.onTargets(m.startStop),
		control.VerbOnce:       m.onTargets(m.startStop),
		control.VerbSignal:     m.onOne(m.signal),
		control.VerbWait:       m.waitAny,
		control.VerbUnregister: m.unregisterAny,
	}
}

// oneFunc handles a verb of one service (control.OneName).
type oneFunc func(ctx context.Context, c control.Caller, s *supervise.Service, req *control.Request) *control.Response

// onOne resolves the one service a OneName verb names.
func (m *Manager) onOne(fn oneFunc) control.HandlerFunc {
	return func(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
		s, resp := m.lookup(c, req.Verb, req.Names[0])
		if resp != nil {
			return resp
		}
		return fn(ctx, c, s, req)
	}
}

// manyFunc handles a verb of services named or all (control.NamesOrAll).
type manyFunc func(ctx context.Context, svcs []*supervise.Service, req *control.Request) *control.Response

// onTargets resolves the services a NamesOrAll verb names, or with all
// the gateway instances, and checks the caller may act on each.
func (m *Manager) onTargets(fn manyFunc) control.HandlerFunc {
	return func(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
		var svcs []*supervise.Service
		if req.All {
			for _, s := range m.group.List() {
				if m.gw.isGateway(s.Status()) {
					if resp := m.permit(c, req.Verb, s); resp != nil {
						return resp
					}
					svcs = append(svcs, s)
				}
			}
		}
		for _, name := range req.Names {
			s, resp := m.lookup(c, req.Verb, name)
			if resp != nil {
				return resp
			}
			svcs = append(svcs, s)
		}
		return fn(ctx, svcs, req)
	}
}

// lookup finds the service called name and checks the caller may run verb
// on it.
func (m *Manager) lookup(c control.Caller, verb, name string) (*supervise.Service, *control.Response) {
	s := m.group.Get(name)
	if s == nil {
		return nil, m.noService(name)
	}
	return s, m.permit(c, verb, s)
}

// permit refuses a verb on a protected service to a caller who may not.
func (m *Manager) permit(c control.Caller, verb string, s *supervise.Service) *control.Response {
	if !c.May(verb, s.Status().Protected) {
		return control.Errorf(control.CodePermission,
			"permission denied: %s is a protected service; only root may %s it", s.Name(), verb)
	}
	return nil
}

func toControl(st supervise.Status) control.Status {
	out := control.Status{Name: st.Name, State: string(st.State), Want: string(st.Want), PID: st.PID, Since: st.Since,
		Ready: st.Ready, Restarts: st.Restarts, Reason: st.Reason, Source: string(st.Source),
		LogPath: st.LogPath, LostLines: st.LostLines, UpSince: st.UpSince}
	if e := st.LastExit; e != nil {
		out.LastExit = &control.Exit{Code: e.Status(), At: e.At, OOM: e.OOM, PidsLimit: e.PidsLimit}
		if e.Signal != 0 {
			out.LastExit.Signal = signame.Name(e.Signal)
		}
	}
	return out
}

// noService answers a name that is no service; a scandir dir that is not
// one (refused, broken, ignored, being removed) is named with what is wrong
// with it.
func (m *Manager) noService(name string) *control.Response {
	if why := m.dyn.why(name); why != "" {
		return control.Errorf(control.CodeFailed, "%s: its scandir dir is not a service: %s; fix it, or remove it with hsvc unregister %s", name, why, name)
	}
	return control.Errorf(control.CodeNoService, "no such service: %s (hsvc list shows the services)", name)
}
