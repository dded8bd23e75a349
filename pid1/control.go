package pid1

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hinit/control"
	"hinit/reconcile"
	"hinit/supervise"
)

// serveControl opens the control socket (SPEC §4) for root and the group of
// the image's user.
func (h *hinit) serveControl(ctx context.Context) {
	if h.set.runtimeDir == "" {
		return
	}
	gid := h.userGID()
	path := filepath.Join(h.set.runtimeDir, control.SocketName)
	ln, err := control.Listen(path, gid)
	if err != nil {
		h.log.Error(fmt.Sprintf("control socket: %v; hsvc will not reach hinit", err))
		return
	}
	go control.Serve(ctx, ln, h, gid, h.log)
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

func (h *hinit) status(names []string) *control.Response {
	resp := control.OK()
	if len(names) == 0 {
		for _, s := range h.group.List() {
			resp.Services = append(resp.Services, toControl(s.Status()))
		}
		for _, st := range h.dyn.noted() {
			resp.Services = append(resp.Services, toControl(st))
		}
		return resp
	}
	for _, name := range names {
		s := h.group.Get(name)
		if s == nil {
			return control.Errorf(control.CodeNoService, "no such service: %s (hsvc list shows the services)", name)
		}
		resp.Services = append(resp.Services, toControl(s.Status()))
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
	for _, s := range h.group.List() {
		if st := s.Status(); st.Essential && (st.State == supervise.StateFailed || st.State == supervise.StateExited) {
			return control.Errorf(control.CodeFailed, "essential service %s is %s: %s", st.Name, st.State, st.Reason)
		}
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

// startStop applies start, stop or restart to every target, then, with
// wait, waits until each is up (ready) or down.
func (h *hinit) startStop(ctx context.Context, svcs []*supervise.Service, req *control.Request) *control.Response {
	for _, s := range svcs {
		h.recordDesired(s, req.Verb)
		var err error
		switch req.Verb {
		case control.VerbStart:
			err = s.Start()
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
	st, err := s.WaitFor(ctx, func(st supervise.Status) bool { return reached(st, until) || hopeless(st, until) })
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return control.Errorf(control.CodeTimeout, "timed out after %v waiting for %s to be %s (it is %s); see hsvc status %s",
			timeout, s.Name(), until, st.State, s.Name())
	case err != nil:
		return control.Errorf(control.CodeFailed, "waiting for %s: %v", s.Name(), err)
	case !reached(st, until):
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

// register publishes a template instance into the scandir as the image's
// user, the same way the boot reconcile does, and waits until hinit
// supervises it.
func (h *hinit) register(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	if h.set.scandir == "" {
		return control.Errorf(control.CodeFailed, "dynamic services are off (no writable scandir); see hinit's log")
	}
	if _, ok := h.set.cfg.Templates[req.Template]; !ok {
		return control.Errorf(control.CodeUsage, "no template %q in %s", req.Template, or(h.set.cfg.File, DefaultConfig))
	}
	name := req.Template + "-" + req.Instance
	if h.group.Get(name) != nil {
		return control.Errorf(control.CodeFailed, "%s is already registered", name)
	}
	err := h.asUser(func() error {
		return reconcile.Publish(h.set.scandir, req.Template, req.Instance, req.Down, req.Env)
	})
	if err != nil {
		return control.Errorf(control.CodeFailed, "register %s: %v", name, err)
	}
	if resp := h.waitMember(ctx, name, true); resp != nil {
		return resp
	}
	resp := control.OK()
	resp.Names = []string{name}
	return resp
}

// unregister stops a dynamic service (writing its planned-stop marker),
// waits until it is down, then removes its dir.
func (h *hinit) unregister(ctx context.Context, s *supervise.Service, req *control.Request) *control.Response {
	st := s.Status()
	if st.Source == "static" {
		return control.Errorf(control.CodeFailed, "%s is a static service of hinit.yaml; stop it instead (hsvc stop %s)", st.Name, st.Name)
	}
	h.recordDesired(s, control.VerbStop)
	s.Stop(true)
	if resp := h.waitUntil(ctx, s, control.UntilDown, req); !resp.OK {
		return resp
	}
	dir := filepath.Join(h.set.scandir, st.Name)
	if err := h.asUser(func() error { return os.RemoveAll(dir) }); err != nil {
		return control.Errorf(control.CodeFailed, "remove %s: %v", dir, err)
	}
	if resp := h.waitMember(ctx, st.Name, false); resp != nil {
		return resp
	}
	return control.OK()
}

// waitMember waits until the scandir watcher has added (or removed) name.
func (h *hinit) waitMember(ctx context.Context, name string, present bool) *control.Response {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		changed := h.group.Watch()
		if (h.group.Get(name) != nil) == present {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return control.Errorf(control.CodeTimeout, "hinit did not pick up %s; see hinit's log", name)
		}
	}
}

func toControl(st supervise.Status) control.Status {
	out := control.Status{Name: st.Name, State: st.State, Want: st.Want, PID: st.PID, Since: st.Since,
		Ready: st.Ready, Restarts: st.Restarts, Reason: st.Reason, Source: st.Source,
		LogPath: st.LogPath, LostLines: st.LostLines}
	if e := st.LastExit; e != nil {
		out.LastExit = &control.Exit{Code: e.Code, At: e.At}
		if e.Signal != 0 {
			out.LastExit.Code = 128 + int(e.Signal)
			out.LastExit.Signal = control.SignalName(e.Signal)
		}
	}
	return out
}
