// Package pid1 is hinit's top level: it boots the container (signals,
// runtime dirs, services, main), forwards signals to main, and shuts
// everything down when main ends, with main's exit status.
//
// One goroutine (hinit.loop) owns the container's fate: it receives the
// forwarded signals, main's exit, essential failures and shutdown requests,
// and starts the shutdown exactly once.
package pid1

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"hinit/account"
	"hinit/config"
	"hinit/reaper"
	"hinit/s6compat"
	"hinit/supervise"
)

// forwarded are the signals hinit passes on to main (SPEC §2). SIGWINCH is
// added when there is no terminal (with one, the kernel tells main itself).
// SIGURG is never among them: the Go runtime uses it.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT,
	syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

// beginsShutdown reports whether a received signal also shuts down.
func beginsShutdown(s os.Signal) bool {
	return s == syscall.SIGTERM || s == syscall.SIGINT || s == syscall.SIGQUIT
}

// hinit is one boot of the container.
type hinit struct {
	log    *slog.Logger
	logh   *lineHandler
	set    *settings
	reaper *reaper.Reaper
	group  *supervise.Group
	stderr io.Writer

	isPID1 bool
	root   bool
	tty    bool

	sigs        chan os.Signal
	stopRequest chan int // an essential service failed, or hsvc shutdown: the exit status
	main        *mainProc
	mainStatus  *reaper.Status // set once main has exited
	mainGone    chan struct{}  // closed once main has exited (or never started)
	cancelSvcs  context.CancelFunc
	// stopWatching ends the scandir watcher when the shutdown begins:
	// closing an inotify instance waits for the kernel to release its
	// watches (milliseconds), which then overlaps with stopping services.
	stopWatching context.CancelFunc
	dyn          *dynamic
	envDir       string                            // the container environment dir, "" when it could not be written
	bootEnv      atomic.Pointer[map[string]string] // while the boot starts services: the environment they all get
	wroteEnv     map[string]string                 // what writeEnvDir wrote
	user         *account.Account                  // hinit.yaml's user; nil when not root or none is configured
	stopping     atomic.Bool                       // the shutdown has begun
	ttyLog       *os.File                          // with a terminal: where hinit's lines and boot hooks' output go
}

// boot runs the container: everything from signal setup to exit status.
func boot(args []string) int {
	h := &hinit{
		stderr:      os.Stderr,
		isPID1:      os.Getpid() == 1,
		root:        os.Geteuid() == 0,
		sigs:        make(chan os.Signal, 16),
		stopRequest: make(chan int, 1),
		mainGone:    make(chan struct{}),
	}
	level, lerr := parseLevel(os.Getenv("HINIT_LOG_LEVEL"))
	h.logh = newLineHandler(os.Stderr, level)
	h.log = slog.New(h.logh)
	h.setupSignals()
	if lerr != nil {
		h.log.Warn(lerr.Error())
	}
	set, err := loadSettings(os.Getenv)
	if err != nil {
		h.fatal(err)
		return 1
	}
	h.set = set
	h.lookupUser()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.reaper.Run(ctx)
	h.prepareRuntime()
	serveControl := h.listenControl()
	h.writeEnvDir()
	if h.isPID1 && set.cfg.S6() { // SPEC §8: look like s6-overlay to hermes' probe
		if err := s6compat.Enter(s6compat.DefaultRoot, h.envDir); err != nil {
			h.log.Error(err.Error())
		}
	}
	if code := h.runHooks(); code >= 0 {
		return code
	}
	h.reresolveUser()
	env := h.environAfterHooks()
	h.reconcileGateways(env)
	svcCtx, cancelSvcs := context.WithCancel(ctx)
	h.cancelSvcs = cancelSvcs
	h.group = supervise.NewGroup(svcCtx, h.deps())
	h.bootEnv.Store(&env)
	h.startStatic(env)
	watchCtx, stopWatching := context.WithCancel(svcCtx)
	h.stopWatching = stopWatching
	synced := h.startDynamic(watchCtx)
	serveControl(ctx)
	select {
	case <-synced:
	case <-time.After(5 * time.Second):
		h.log.Warn("scandir not read within 5s: starting main anyway")
	}
	h.bootEnv.Store(nil) // from now on every start reads the environment dir afresh

	argv := routeMain(set.cfg.Main, args, env)
	if len(argv) == 0 {
		h.fatal(fmt.Errorf("nothing to run: give the container a command, or set main.default in %s", or(set.cfg.File, DefaultConfig)))
		return h.finish(2)
	}
	if h.main, err = h.startMain(argv, env); err != nil {
		h.log.Error(fmt.Sprintf("main: %v", err))
		return h.finish(supervise.ExecFailureCode(err))
	}
	h.log.Info("main started", "pid", h.main.pid, "argv", fmt.Sprint(argv))
	// Booting many services leaves garbage behind (environments, expanded
	// definitions): give it back to the system once, a moment later, so
	// that the collection does not compete with main's own start.
	time.AfterFunc(time.Second, debug.FreeOSMemory)
	return h.loop()
}

// setupSignals runs before any child exists (SPEC §2 step 1).
func (h *hinit) setupSignals() {
	h.tty = isTerminal(0)
	sigs := forwarded
	if !h.tty {
		sigs = append(sigs, syscall.SIGWINCH)
	}
	signal.Notify(h.sigs, sigs...)
	h.reaper = reaper.New(h.log)
	h.reaper.IgnoreTTYSignals()
	if !h.isPID1 {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			h.log.Warn("cannot become a child subreaper; orphans will not be reaped", "err", err)
		} else {
			h.log.Info(fmt.Sprintf("not PID 1 (pid %d): reaping orphans as a child subreaper", os.Getpid()))
		}
	}
}

// deps is what every service shares.
func (h *hinit) deps() *supervise.Deps {
	var console io.Writer = os.Stdout
	if h.tty {
		console = nil // nothing but main writes to the terminal
	}
	return &supervise.Deps{
		Spawner:     h.reaper,
		Log:         h.log,
		Environ:     h.containerEnv,
		Console:     console,
		Root:        h.root,
		DefaultUser: h.set.cfg.User,
		Marker:      writeMarker,
		Failed: func(name string, status int) {
			h.log.Error("essential service failed: shutting down", "svc", name, "code", status)
			select {
			case h.stopRequest <- status:
			default:
			}
		},
	}
}

// startStatic registers the services of hinit.yaml, up or, when their
// enabled: is falsy (in the container environment env), down.
func (h *hinit) startStatic(env map[string]string) {
	for _, def := range h.set.cfg.Services {
		up := def.Enabled == "" || config.Truthy(config.Expand(def.Enabled, env))
		if _, err := h.group.Add(def, up); err != nil {
			h.log.Error("cannot add service", "svc", def.Name, "err", err)
		}
	}
	h.log.Info(fmt.Sprintf("%d static services registered", len(h.set.cfg.Services)))
}

// loop waits for the end: main's exit, a shutdown signal, an essential
// failure or a shutdown request; then shuts down and returns the status.
func (h *hinit) loop() int {
	mainDone := h.main.done
	explicit := -1
	var finished chan struct{}
	begin := func(why string, mainSignalled bool) {
		if finished != nil {
			return
		}
		h.log.Info("shutting down: " + why)
		h.stopping.Store(true)
		h.stopWatching()
		finished = make(chan struct{})
		deadline := time.Now().Add(h.set.shutdownTimeout)
		go func() {
			h.shutdown(deadline, mainSignalled)
			close(finished)
		}()
	}
	for {
		select {
		case sig := <-h.sigs:
			h.forward(sig)
			if beginsShutdown(sig) {
				begin(fmt.Sprintf("received %s", unix.SignalName(sig.(syscall.Signal))), true)
			}
		case st := <-mainDone:
			mainDone = nil
			h.mainStatus = &st
			close(h.mainGone)
			h.log.Info("main exited", "pid", st.PID, "code", st.ExitStatus())
			begin("main exited", false)
		case code := <-h.stopRequest:
			why := "requested"
			if code >= 0 && explicit < 0 {
				explicit = code
				why = fmt.Sprintf("requested with exit status %d", code)
			}
			begin(why, false)
		case <-finished:
			if explicit >= 0 {
				return explicit
			}
			return mainExitStatus(h.set.cfg.Main, *h.mainStatus)
		}
	}
}

// forward passes a signal on to main.
func (h *hinit) forward(sig os.Signal) {
	if h.mainStatus != nil || h.main == nil {
		return
	}
	if err := syscall.Kill(h.main.pid, sig.(syscall.Signal)); err != nil && err != syscall.ESRCH {
		h.log.Warn("cannot forward signal to main", "signal", sig, "err", err)
	}
}

// finish shuts down after main could not run and returns code.
func (h *hinit) finish(code int) int {
	close(h.mainGone)
	h.shutdown(time.Now().Add(h.set.shutdownTimeout), true)
	return code
}

// fatal reports an error that stops the boot, one line per problem.
func (h *hinit) fatal(err error) {
	if ce, ok := err.(*config.Error); ok {
		for _, l := range ce.Lines() {
			fmt.Fprintf(h.stderr, "hinit: %s\n", l)
		}
		return
	}
	fmt.Fprintf(h.stderr, "hinit: %v\n", err)
}
