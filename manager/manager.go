// Package manager is hinit's service manager: it owns the group of
// supervised services, turns the scandir's dirs into services (keeping a
// note of the dirs that are not), records what users ask of gateways, and
// answers hsvc's requests as the control Handler.
//
// It is built with everything it depends on (Options) and knows nothing of
// PID 1: the boot creates it once the boot hooks have run, and shuts it
// down with the container. Its tests run without root, against a temp
// scandir and real child processes.
package manager

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"hinit/account"
	"hinit/cgroup"
	"hinit/config"
	"hinit/control"
	"hinit/internal/keylock"
	"hinit/scandir"
	"hinit/supervise"
)

// Options is what a Manager depends on.
type Options struct {
	Config  *config.Config
	Scandir string           // the scandir; "" when dynamic services are off
	User    *account.Account // the image's user: whose rights scandir and gateway writes use; nil = hinit's own
	// Environ is the container environment, read afresh at every start;
	// callers do not modify the map.
	Environ func() map[string]string
	// RequestShutdown asks the container to shut down: with exit status
	// code, or main's own when code < 0. It must not block. The channel
	// answers once: nil, or why code was not taken (a shutdown already
	// under way keeps the status of what began it).
	RequestShutdown func(code int) <-chan error
	Spawner         supervise.Spawner // forks and reaps: the reaper
	Console         io.Writer         // where services' console copies go; nil with a terminal
	Root            bool              // hinit runs as root and may switch users
	// CheckGrace: hsvc check fails for a gateway wanted up but failing
	// for longer than this; 0 leaves gateways out of the check.
	CheckGrace time.Duration
	// ShutdownTimeout is the container's shutdown budget: Reconcile warns
	// when a gateway's drain needs more.
	ShutdownTimeout time.Duration
	Log             *slog.Logger
}

// Manager supervises the container's services and answers hsvc.
type Manager struct {
	cfg      *config.Config
	scandir  string
	user     *account.Account
	environ  func() map[string]string
	shutdown func(code int) <-chan error
	log      *slog.Logger
	// life is New's ctx: it ends with the manager. A register's wait for
	// the watcher outlives its client, and lasts as long (settleRegister).
	life context.Context
	// checkGrace: see Options.CheckGrace.
	checkGrace      time.Duration
	shutdownTimeout time.Duration // see Options.ShutdownTimeout

	group *supervise.Group
	dyn   *dynamic
	// watcher is the scandir's, once WatchScandir has begun; removals
	// of scandir dirs go through it (removeSlot).
	watcher  atomic.Pointer[scandir.Watcher]
	gw       gateways
	mux      *control.Mux
	stopping atomic.Bool // the container's shutdown has begun
	// requests holds one service's desired state record (a gateway's)
	// and the request it records together (applyDesired): two requests at
	// once leave the record and the service agreeing. It is by service
	// name: a request never waits behind another service's, which may wait
	// for its runner, its record's fsyncs or a turn of asuser.Do, all of
	// which the image's user can make slow (root's hsvc restart of a root
	// service waited behind the hermes user's requests, 10 s and more).
	// Each such request is counted in underWay, for the shutdown to wait
	// for those let through before Stopping (awaitRequest) without a lock
	// that later requests would queue behind.
	requests    keylock.Map
	underWayMu  sync.Mutex
	underWay    int           // requests holding lockRequest; guarded by underWayMu
	idle        chan struct{} // awaitRequest's, closed when underWay drops to 0; guarded by underWayMu
	removing    chan struct{} // a token while a scandir dir is removed as the user (removeSlot)
	registering chan struct{} // a token while another user's register publishes (register)
	// watchDown is closed once the scandir watcher has stopped for good,
	// before hinit's end (the scandir removed or moved): nothing put in
	// the scandir is read any more. watchErr, set before, says why.
	watchDown chan struct{}
	watchErr  error
}

// watchStopped is why the scandir watcher stopped for good, or nil.
func (m *Manager) watchStopped() error {
	select {
	case <-m.watchDown:
		return m.watchErr
	default:
		return nil
	}
}

// lockRequest counts a request in underWay and takes the request lock of
// the service name, and returns the function that gives both back.
func (m *Manager) lockRequest(name string) (unlock func()) {
	m.underWayMu.Lock()
	m.underWay++
	m.underWayMu.Unlock()
	unlockName := m.requests.Lock(name)
	return func() {
		unlockName()
		m.underWayMu.Lock()
		if m.underWay--; m.underWay == 0 && m.idle != nil {
			close(m.idle)
			m.idle = nil
		}
		m.underWayMu.Unlock()
	}
}

// New returns a Manager whose services live until ctx ends. It starts
// nothing: Reconcile, StartStatic and WatchScandir do.
func New(ctx context.Context, o Options) *Manager {
	m := &Manager{cfg: o.Config, scandir: o.Scandir, user: o.User, environ: o.Environ, life: ctx,
		shutdown: o.RequestShutdown, log: o.Log, checkGrace: o.CheckGrace, shutdownTimeout: o.ShutdownTimeout,
		removing: make(chan struct{}, 1), registering: make(chan struct{}, 1), watchDown: make(chan struct{})}
	m.gw = newGateways(o.Config, m.environ)
	m.dyn = newDynamic(m)
	m.group = supervise.NewGroup(ctx, &supervise.Deps{
		Spawner:     o.Spawner,
		Log:         o.Log,
		Environ:     o.Environ,
		Console:     o.Console,
		Root:        o.Root,
		DefaultUser: o.Config.User,
		Marker:      writeMarker,
		MaxStopping: o.Config.ServicesMax,
		Cgroup:      cgroup.Container,
		Failed: func(name string, status int) {
			m.log.Error("essential service failed: shutting down", "svc", name, "code", status)
			m.shutdown(status)
		},
	})
	m.mux = control.NewMux(m.handlers())
	return m
}

// Handle answers one hsvc request (control.Handler); the control server
// has already checked the caller and the request's form.
func (m *Manager) Handle(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	return m.mux.Handle(ctx, c, req)
}

// StartStatic registers the services of hinit.yaml, up or, when their
// enabled: is falsy (in the container environment env), down.
func (m *Manager) StartStatic(env map[string]string) {
	for _, def := range m.cfg.Services {
		v := config.Expand(def.Enabled, env)
		up := def.Enabled == "" || config.Truthy(v)
		if def.Enabled != "" && !up && !config.Falsy(v) {
			m.log.Warn(fmt.Sprintf("enabled: %q is neither true (%s) nor false (%s): the service stays down", v, config.TruthySpellings, config.FalsySpellings), "svc", def.Name)
		}
		if _, err := m.group.Add(def, up); err != nil {
			m.log.Error("cannot add service", "svc", def.Name, "err", err)
		}
	}
	m.log.Info(fmt.Sprintf("%d static services registered", len(m.cfg.Services)))
}

// Shutdown stops every service for the container's shutdown (stop signal
// now, SIGKILL at its stop timeout or at deadline) and returns once none
// runs, or ctx ends. From then on no service starts, and check fails.
func (m *Manager) Shutdown(ctx context.Context, deadline time.Time) {
	m.Stopping()
	m.awaitRequest(deadline)
	m.group.Shutdown(ctx, deadline)
}

// awaitRequest waits, in the shutdown's own goroutine, for a service
// request applyDesired let through before Stopping, so that a start it
// applies comes before the services are stopped. Its record takes fsyncs
// and its request the runner's answer: milliseconds, a second on a busy
// disk, for ever on a hung one; so at most maxRequestWait, and a quarter
// of the time left, which is the services' to stop in: a service whose
// stop begins at the deadline gets its SIGKILL with its stop signal. A
// request that gets through later starts nothing: the stopped services
// refuse it.
func (m *Manager) awaitRequest(deadline time.Time) {
	// No lock the requests to come wait behind: a writer left waiting
	// for a hung request held every later one, of every service.
	m.underWayMu.Lock()
	if m.underWay == 0 {
		// None under way: the usual case, and one a shutdown that
		// begins at its deadline (a bare main that outlived it) must
		// not see lost to a timer of zero.
		m.underWayMu.Unlock()
		return
	}
	if m.idle == nil {
		m.idle = make(chan struct{})
	}
	done := m.idle
	m.underWayMu.Unlock()
	t := time.NewTimer(min(maxRequestWait, time.Until(deadline)/4))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		m.log.Warn("shutdown: a service request is still under way (a slow or hung volume?); stopping the services anyway")
	}
}

// maxRequestWait is the longest the shutdown waits for a gateway request
// under way (awaitRequest).
const maxRequestWait = time.Second

// Stopping tells the manager the container's shutdown has begun, before
// Shutdown is called: hsvc check fails from then on, and a start or
// restart is refused before it records anything (applyDesired reads the
// flag under its locks; Shutdown waits for one already let through). It
// returns at once: PID 1's loop calls it, and must not wait for a gateway
// request under way.
func (m *Manager) Stopping() {
	m.stopping.Store(true)
}

// Wait returns once every service's goroutine has ended (after Shutdown
// and the end of New's ctx), its log flushed and closed, removed services
// included, or once ctx ends, with the names of those still running then
// (supervise.Group.Wait).
func (m *Manager) Wait(ctx context.Context) (running []string) {
	return m.group.Wait(ctx)
}

// asUser runs fn with the file rights of the image's user (account.Do).
func (m *Manager) asUser(fn func() error) error { return account.Do(m.user, fn) }

// asUserCtx is asUser for a request, whose client may give up before fn's
// turn comes (account.DoCtx).
func (m *Manager) asUserCtx(ctx context.Context, fn func() error) error {
	return account.DoCtx(ctx, m.user, fn)
}

// configName names hinit.yaml in messages.
func (m *Manager) configName() string {
	if m.cfg.File == "" {
		return "the built-in configuration (no hinit.yaml was read)"
	}
	return m.cfg.File
}
