package pid1

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"hinit/control"
	"hinit/manager"
)

// listenControl opens the control socket (SPEC §4) for root and the group
// of the image's user, in the background while the boot goes on, and
// answers from then on: every request with "booting" (a health check
// while a boot hook runs for minutes must not wait 10 s for nothing and
// be told hinit "may be stuck"), then, once the services exist and before
// main starts (so main can call hsvc at once), with the service manager:
// serve hands it over, and the group the boot hook may have changed.
func (h *hinit) listenControl(ctx context.Context) (serve func()) {
	if h.set.runtimeDir == "" {
		return func() {}
	}
	gid := h.userGID()
	path := filepath.Join(h.set.runtimeDir, control.SocketName)
	gate := &bootGate{since: time.Now()}
	ready := make(chan *control.Server, 1)
	h.controlDone = make(chan struct{})
	go func() {
		defer close(h.controlDone)
		ln, err := control.Listen(path, gid)
		if err != nil {
			h.log.Error(fmt.Sprintf("control socket: %v; hsvc will not reach hinit", err))
			ready <- nil
			return
		}
		srv := &control.Server{Handler: gate, ControlGID: gid, Log: h.log}
		srv.SetControlGID(gid)
		ready <- srv
		srv.Serve(ctx, ln)
	}()
	return func() {
		if srv := <-ready; srv != nil {
			// The members of the new group are let in before the socket
			// is theirs: none is refused in between.
			srv.SetControlGID(h.userGID())
			h.regroupSocket(gid)
			gate.mgr.Store(h.mgr)
		}
	}
}

// awaitControl waits, once hinit's context is cancelled at exit, for the
// control server to write the answers in flight, and at most a second
// (exitWait): hsvc shutdown's own answer lost its race with hinit's exit
// ("hinit closed the connection without one"), and a client connected at
// the exit got no answer at all.
func (h *hinit) awaitControl() {
	if h.controlDone == nil {
		return
	}
	t := time.NewTimer(h.exitWait(time.Second))
	defer t.Stop()
	select {
	case <-h.controlDone:
	case <-t.C:
		h.log.Warn("control: answers still in flight at exit are lost")
	}
}

// bootGate answers for the service manager once it is there, and before
// that "booting".
type bootGate struct {
	since time.Time
	mgr   atomic.Pointer[manager.Manager]
}

func (g *bootGate) Handle(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	if m := g.mgr.Load(); m != nil {
		return m.Handle(ctx, c, req)
	}
	return control.Errorf(control.CodeFailed, "hinit is booting (for %s: its boot hooks, then the gateways' reconcile): ask again in a moment",
		time.Since(g.since).Round(time.Second))
}
