package manager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"syscall"
	"time"

	"hinit/config"
	"hinit/control"
	"hinit/reconcile"
	"hinit/scandir"
	"hinit/signame"
	"hinit/supervise"
	"hinit/svclog"
)

// status lists every service, then the scandir dirs that are not
// services; or the services and dirs named.
func (m *Manager) status(_ context.Context, _ control.Caller, req *control.Request) *control.Response {
	resp := control.OK()
	var env map[string]string
	// add shows st; service says it is a service's (not a noted dir's),
	// whose dir may hold a new definition that is not applied.
	add := func(st supervise.Status, service bool) {
		cs := toControl(st)
		if service && st.Source != config.SourceStatic {
			cs.NotApplied = m.dyn.unapplied(st.Name)
		}
		if cs.LogPath == "" && st.LogDir != "" {
			// Not started yet: where its log will be, as its next
			// start would expand log.dir (read once per request).
			if env == nil {
				env = m.environ()
			}
			dir := config.Expand(st.LogDir, env)
			if len(dir) > config.MaxPath {
				// ${VAR}s make it longer than any path: as written
				// (bounded), not as many copies of VAR in every row.
				dir = st.LogDir
			}
			cs.LogPath = svclog.CurrentPath(dir)
		}
		resp.Services = append(resp.Services, cs)
	}
	if len(req.Names) == 0 {
		for _, s := range m.group.List() {
			add(s.Status(), true)
		}
		for _, st := range m.dyn.noted() {
			add(st, false)
		}
		return resp
	}
	for _, name := range req.Names {
		if s := m.group.Get(name); s != nil {
			add(s.Status(), true)
		} else if st, ok := m.dyn.notedOne(name); ok {
			add(st, false)
		} else {
			return m.noService(name)
		}
	}
	return resp
}

func (m *Manager) list(ctx context.Context, _ control.Caller, req *control.Request) *control.Response {
	if resp := m.notScandir(ctx, req.Scandir); resp != nil {
		return resp
	}
	if req.Scandir != nil {
		// s6-svscanctl -a, "scan now": what was made in the scandir before
		// it is a service when it returns (hermes makes a dir, calls
		// s6-svscanctl -a, then s6-svc -u on the dir).
		sctx, cancel := context.WithTimeout(ctx, control.QuickAnswer)
		defer cancel()
		if err := m.watcher.Load().Sync(sctx); err != nil {
			m.log.Warn("scandir: changes not caught up with for s6-svscanctl", "err", err)
		}
	}
	resp := control.OK()
	resp.Names = []string{}
	for _, s := range m.group.List() {
		if strings.HasPrefix(s.Name(), req.Prefix) {
			resp.Names = append(resp.Names, s.Name())
		}
	}
	slices.Sort(resp.Names)
	return resp
}

// notScandir refuses a request that names a dir (Request.Scandir) other
// than the scandir hinit watches; nil when it names none, or that one.
func (m *Manager) notScandir(ctx context.Context, id *control.DirID) *control.Response {
	if id == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, control.QuickAnswer)
	defer cancel()
	if w := m.watcher.Load(); w == nil || !w.Watches(ctx, id.Dev, id.Ino) {
		watched := m.scandir
		if w == nil {
			watched = "none: dynamic services are off"
		}
		return control.Errorf(control.CodeNoService, "that dir is not the scandir hinit watches (%s)", watched)
	}
	return nil
}

// check is the health probe: hinit answers and no essential service failed
// (gave up, or ended for good with a failure: an essential one-shot that
// exited 0 under restart: on-failure is done, not failed).
func (m *Manager) check(context.Context, control.Caller, *control.Request) *control.Response {
	if m.stopping.Load() {
		return control.Errorf(control.CodeFailed, "the container is shutting down")
	}
	if err := m.watchStopped(); errors.Is(err, scandir.ErrScandirGone) {
		// Gone since it was watched (moved or removed, by the user who
		// owns it): gateways registered from now on would never start,
		// until the container restarts, which this answer asks for. A
		// scandir that could not be watched from the boot on was said
		// then, and leaves the check as it was.
		return control.Errorf(control.CodeFailed, "hinit no longer reads the scandir: %v; restart the container", err)
	}
	var sts []supervise.Status
	for _, s := range m.group.List() {
		st := s.Status()
		sts = append(sts, st)
		if st.Essential && (st.State == supervise.StateFailed || st.State == supervise.StateExited && st.LastExit.Failed()) {
			return control.Errorf(control.CodeFailed, "essential service %s is %s: %s", st.Name, st.State, st.Reason)
		}
	}
	if err := reconcile.CheckGateways(sts, m.gw.isGateway, time.Now(), m.checkGrace); err != nil {
		return control.Errorf(control.CodeFailed, "%v", err)
	}
	return control.OK()
}

func (m *Manager) shutdownRequest(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	if resp := m.notScandir(ctx, req.Scandir); resp != nil {
		return resp // the wrong dir is no supervisor, whoever asks (s6-svscanctl)
	}
	if !c.May(control.VerbShutdown, false) {
		return control.Errorf(control.CodePermission, "permission denied: only root may shut the container down")
	}
	code := -1 // main's own exit status decides
	if req.ExitCode != nil {
		code = *req.ExitCode
	}
	select {
	case err := <-m.shutdown(code):
		if err != nil {
			return control.Errorf(control.CodeFailed, "%v", err)
		}
	case <-ctx.Done(): // hinit exits before it could answer
		if code >= 0 {
			return control.Errorf(control.CodeFailed, "hinit is exiting: exit status %d not taken", code)
		}
	}
	return control.OK()
}

func (m *Manager) signal(_ context.Context, _ control.Caller, s *supervise.Service, req *control.Request) *control.Response {
	sig := supervise.StopSignal // with Restart and no signal
	if req.Signal != "" || !req.Restart {
		var err error
		if sig, err = signame.Parse(req.Signal); err != nil {
			return control.Errorf(control.CodeUsage, "%v", err)
		}
	}
	send := s.Signal
	switch {
	case req.Restart:
		send = func(sig syscall.Signal) error { return s.SignalRestart(sig, req.Process) }
	case req.Process:
		send = s.SignalProcess
	}
	if err := send(sig); err != nil {
		if errors.Is(err, supervise.ErrNotRunning) {
			return control.Errorf(control.CodeFailed, "%s is not running; start it first (hsvc start %s)", s.Name(), s.Name())
		}
		return control.Errorf(control.CodeFailed, "%s: %v", s.Name(), err)
	}
	return control.OK()
}
