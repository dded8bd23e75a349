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
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"hinit/account"
	"hinit/config"
	"hinit/control"
	"hinit/launch"
	"hinit/manager"
	"hinit/reaper"
	"hinit/s6compat"
	"hinit/signame"
	"hinit/svclog"
)

// forwarded are the signals hinit passes on to main (SPEC §2), and
// SIGWINCH when there is no terminal (with one, the kernel tells main
// itself); a bare hinit adds bareForwarded. SIGURG is never among them:
// the Go runtime uses it.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT,
	syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

// bareForwarded are the other signals a bare hinit passes on, the
// STOPSIGNALs images use beyond those (SIGPWR; SIGRTMIN+3, systemd's), so
// that docker stop reaches main as under tini. tini passes on every
// signal; hinit does not: each signal caught is a round trip to the Go
// runtime's signal thread at start (tini's fifty cost 1.2 ms, a third of
// a bare run of /bin/true, and 0.6 ms caught in the background), and
// the runtime cannot pass on SIGRTMIN (34) nor SIGPROF at all.
var bareForwarded = []os.Signal{syscall.SIGPWR, syscall.Signal(37)}

// parentDied begins the reason of a shutdown that -p's signal began: a
// shutdown request, with its deadline.
const parentDied = "hinit's parent died"

// beginsShutdown reports whether a received signal also shuts down: TERM,
// INT and QUIT (SPEC §2), but for QUIT in the bare mode, which only
// forwards it, as tini does: a JVM's thread dump (docker kill -s QUIT)
// must not end the container at the deadline.
func (h *hinit) beginsShutdown(s os.Signal) bool {
	return s == syscall.SIGTERM || s == syscall.SIGINT || s == syscall.SIGQUIT && !h.set.bare
}

// hinit is one boot of the container.
type hinit struct {
	log    *slog.Logger
	logh   *lineHandler
	set    *settings
	reaper *reaper.Reaper
	mgr    *manager.Manager // the services and the hsvc verbs
	stderr io.Writer

	opts    *options       // tini's flags and variables
	ppid    int            // hinit's parent at start, for -p
	errOut  *svclog.Stream // hinit's stderr, which a stalled reader cannot hold
	errGate *termGate      // errOut, held back while main has the terminal
	outGate *termGate      // the services' console copies, likewise
	isPID1  bool
	root    bool
	tty     bool
	// ignoredAtStart are the forwarded signals hinit inherited ignored:
	// forwarded, never a shutdown.
	ignoredAtStart []os.Signal

	sigs        chan os.Signal
	stopRequest chan shutdownRequest // an essential service failed, or hsvc shutdown
	main        *mainProc
	mainStatus  *reaper.Status // set once main has exited
	mainGone    chan struct{}  // closed once main has exited (or never started)
	cancelSvcs  context.CancelFunc
	// stopWatching ends the scandir watcher when the shutdown begins:
	// closing an inotify instance waits for the kernel to release its
	// watches (milliseconds), which then overlaps with stopping services.
	stopWatching context.CancelFunc
	envDir       string                            // the container environment dir, "" when it could not be written
	bootEnv      atomic.Pointer[map[string]string] // while the boot starts services: the environment they all get
	lastEnv      atomic.Pointer[map[string]string] // the environment dir's last good reading (containerEnv)
	wroteEnv     map[string]string                 // what writeEnvDir wrote
	user         *account.Account                  // hinit.yaml's user; nil when not root or none is configured
	ttyLog       *os.File                          // with a terminal: where hinit's lines and boot hooks' output go
	prevLog      string                            // the last boot's hinit.log, kept (keepPreviousLog); "" when none
	ttyModes     *unix.Termios                     // with a terminal: its modes when hinit started, put back when main exits
	lent         []lentFD                          // terminals main's user owns while main runs
	flushLent    bool                              // a terminal was lent: its unread input is thrown away (flushInput)
	exitBy       time.Time                         // once the shutdown begins: its deadline and shutdownMargin, when hinit must be gone
	controlDone  chan struct{}                     // closed once the control server has stopped; nil when there is none
}

// boot runs the container: everything from signal setup to exit status.
// opts are tini's flags and variables (options.go).
func boot(args []string, opts *options) int {
	h := &hinit{
		stderr:      os.Stderr,
		opts:        opts,
		ppid:        os.Getppid(),
		isPID1:      os.Getpid() == 1,
		root:        os.Geteuid() == 0,
		sigs:        make(chan os.Signal, 16),
		stopRequest: make(chan shutdownRequest, 1),
		mainGone:    make(chan struct{}),
	}
	set, err := loadSettings(os.Getenv)
	if err != nil {
		h.fatal(err)
		return 1
	}
	var nested string
	if !set.bare && !h.isPID1 && control.Answering(set.runtimeDir) {
		nested = fmt.Sprintf("another hinit supervises this container (%s answers): running the command only, as tini would, and leaving its services alone",
			filepath.Join(set.runtimeDir, control.SocketName))
		set = set.nested()
	}
	h.set = set
	h.setupOutput()
	if nested != "" {
		h.log.Warn(nested)
	}
	defer func() { h.errOut.Close(h.stderrWait()) }() // last: after what release writes
	defer h.errGate.release()
	defer h.flushInput() // what main left behind typed after main's exit
	h.setupSignals()
	if !set.bare {
		reserveThreads()
		h.checkCaps()
		h.checkFileLimit()
		h.checkTmpfs()
		h.lookupUser()
	}
	defer h.awaitControl() // after cancel: the answers in flight leave first
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.reaper.Run(ctx)
	if !set.bare {
		h.prepareRuntime()
	}
	serveControl := h.listenControl(ctx)
	h.writeEnvDir()
	if h.isPID1 && set.cfg.S6() { // SPEC §8: look like s6-overlay to hermes' probe
		if err := s6compat.Enter(s6compat.DefaultRoot, h.envDir); err != nil {
			h.log.Error(err.Error())
		}
	} else if set.cfg.S6() {
		// hermes' probe reads /proc/1/comm, another init's here: it takes
		// its path for a host without s6, as the s6 image's dispatcher
		// does when it is not PID 1.
		h.log.Warn(fmt.Sprintf("compat: s6-overlay needs hinit as PID 1 (it is pid %d here): hermes will not see s6, and its gateway commands will not reach hinit's gateways; run the image without --init", os.Getpid()))
	}
	if code := h.runHooks(); code >= 0 {
		return code
	}
	h.reresolveUser()
	env := h.environAfterHooks()
	svcCtx, cancelSvcs := context.WithCancel(ctx)
	h.cancelSvcs = cancelSvcs
	h.mgr = manager.New(svcCtx, h.managerOptions())
	h.mgr.Reconcile(env, args)
	h.bootEnv.Store(&env)
	h.mgr.StartStatic(env)
	watchCtx, stopWatching := context.WithCancel(svcCtx)
	h.stopWatching = stopWatching
	synced := h.mgr.WatchScandir(watchCtx)
	serveControl()
	select {
	case <-synced:
	case <-time.After(5 * time.Second):
		h.log.Warn("scandir not read within 5s: starting main anyway")
	}
	h.bootEnv.Store(nil) // from now on every start reads the environment dir afresh

	beforeMain(h)
	if code, ok := h.shutdownAsked(); ok {
		h.logToStderrAgain() // main will not run: the terminal is nobody's
		return h.finish("requested before main started", code)
	}
	argv := routeMain(set.cfg.Main, args, env)
	if len(argv) == 0 {
		h.logToStderrAgain() // main will not run: the terminal is nobody's
		h.fatal(fmt.Errorf("nothing to run: give the container a command, or set main.default in %s", or(set.cfg.File, DefaultConfig)))
		return h.finish("nothing to run", 2)
	}
	if h.main, err = h.startMain(argv, env); err != nil {
		h.logToStderrAgain()
		h.log.Error(fmt.Sprintf("main: %v", err))
		return h.finish("main could not start", opts.exitStatus(set.cfg.Main, launch.ExitCode(err)))
	}
	h.log.Info("main started", "pid", h.main.pid, "argv", fmt.Sprint(argv))
	if !set.bare {
		// Booting many services leaves garbage behind (environments,
		// expanded definitions): give it back to the system once, a
		// moment later, so that the collection does not compete with
		// main's own start.
		time.AfterFunc(time.Second, debug.FreeOSMemory)
	}
	return h.loop()
}

// setupSignals runs before any child exists (SPEC §2 step 1). A signal
// hinit inherited ignored (SIGINT or SIGHUP from nohup or a CI runner) is
// caught and forwarded all the same, as tini's sigtimedwait gets it (the
// kernel keeps a blocked signal whatever its disposition), but shuts
// nothing down; main and the services start with it ignored (childsig), so
// it reaches only a main that set its own handler (docs/tini.md, "Signals
// main starts with").
func (h *hinit) setupSignals() {
	list := append(slices.Clone(forwarded), syscall.SIGWINCH)
	if h.set.bare {
		list = append(list, bareForwarded...)
	}
	var sigs []os.Signal
	for _, s := range list {
		if signal.Ignored(s) { // before Notify, which ends it
			h.ignoredAtStart = append(h.ignoredAtStart, s)
		}
		// With a terminal the kernel tells main of SIGWINCH itself.
		if !(h.tty && s == syscall.SIGWINCH) {
			sigs = append(sigs, s)
		}
	}
	if p := h.opts.pdeath; catchable(p) && !slices.Contains(sigs, os.Signal(p)) {
		sigs = append(sigs, p)
	}
	signal.Notify(h.sigs, sigs...)
	// A write to a broken stdout or stderr (docker logs' reader gone,
	// `hinit ... | head`) is then an EPIPE for its writer, as on any other
	// descriptor: with SIGPIPE not caught, the Go runtime ends the process
	// at such a write, and as PID 1, where the signal cannot kill, exits 2.
	// Nobody reads the channel; exec resets the handler, so children get
	// SIGPIPE at its default.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if h.isPID1 {
		// As a namespace's init, a signal nothing catches is dropped by
		// the kernel, as under tini: `docker kill -s ABRT` reaches
		// nobody. These the Go runtime catches itself, and one sent by
		// kill(2) crashed hinit, and the container with it, with a
		// goroutine dump and exit 2. Caught, only a real fault of
		// hinit's own still crashes it. Only SIGABRT costs a round trip.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL,
			syscall.SIGSEGV, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGSTKFLT)
	}
	h.reaper = reaper.New(h.log)
	h.reaper.IgnoreTTYSignals()
	if h.opts.warnReap {
		h.reaper.WarnOrphans()
	}
	if !h.isPID1 || h.opts.subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			h.log.Warn("cannot become a child subreaper; orphans will not be reaped", "err", err)
		} else if !h.isPID1 {
			h.log.Info(fmt.Sprintf("not PID 1 (pid %d): reaping orphans as a child subreaper", os.Getpid()))
		}
	}
	h.setParentDeathSignal()
}

// managerOptions wires the service manager to this boot.
func (h *hinit) managerOptions() manager.Options {
	return manager.Options{
		Config:          h.set.cfg,
		Scandir:         h.set.scandir,
		User:            h.user,
		Environ:         h.containerEnv,
		RequestShutdown: h.requestShutdown,
		Spawner:         h.reaper,
		Console:         h.outGate, // held back while main has the terminal
		Root:            h.root,
		CheckGrace:      h.set.checkGrace,
		ShutdownTimeout: h.set.shutdownTimeout,
		Log:             h.log,
	}
}

// shutdownRequest asks loop to shut down with exit status code (main's
// own when code < 0); loop answers on answer (buffered): nil, or why the
// exit status was not taken.
type shutdownRequest struct {
	code   int
	answer chan error
}

// requestShutdown asks loop to shut down with exit status code (main's
// own when code < 0) without blocking; the answer comes on the channel
// (manager.Options.RequestShutdown). A request already on its way wins:
// this one's exit status is then not taken.
func (h *hinit) requestShutdown(code int) <-chan error {
	req := shutdownRequest{code: code, answer: make(chan error, 1)}
	select {
	case h.stopRequest <- req:
	default:
		req.answer <- notTaken(code, "another shutdown request is on its way")
	}
	return req.answer
}

// beforeMain is called by the boot just before it takes a shutdown asked
// meanwhile and starts main; a test holds it there.
var beforeMain = func(*hinit) {}

// shutdownAsked takes a shutdown asked while the boot started services
// (an essential service that failed at once, hsvc shutdown), before main
// starts: main is then never started, only to be sent SIGTERM, and the
// status is the one asked, or main's for a SIGTERM when none was (as
// -e and main.remap_exit map it).
func (h *hinit) shutdownAsked() (code int, ok bool) {
	select {
	case req := <-h.stopRequest:
		req.answer <- nil
		code = req.code
		if code < 0 {
			code = h.opts.exitStatus(h.set.cfg.Main, signame.ExitStatus(syscall.SIGTERM))
		}
		h.log.Info(fmt.Sprintf("shutting down before main started: requested with exit status %d", code))
		return code, true
	default:
		return 0, false
	}
}

// notTaken is the answer to a request whose exit status a shutdown
// already under way, or on its way, leaves out; nil when it asked for none.
func notTaken(code int, why string) error {
	if code < 0 {
		return nil
	}
	return fmt.Errorf("%s: exit status %d not taken", why, code)
}

// loop waits for the end: main's exit, a shutdown signal, an essential
// failure or a shutdown request; then shuts down and returns the status.
func (h *hinit) loop() int {
	mainDone := h.main.done
	explicit := -1
	var (
		finished chan struct{}    // closed once the shutdown is over
		deadline time.Time        // the shutdown's, set when it begins
		began    string           // what began it
		overdue  <-chan os.Signal // bare mode: the deadline of a main that has its signal
	)
	stop := func(mainSignalled bool) {
		if finished != nil {
			return
		}
		h.mgr.Stopping()
		h.stopWatching()
		finished = make(chan struct{})
		go func() {
			h.shutdown(deadline, mainSignalled)
			close(finished)
		}()
	}
	waiting := false // for a signalled main, with no deadline (settings.waitMain)
	// begin begins the shutdown (why); mainSignalled: main has had its
	// signal; wait: main is waited for with no deadline, as tini waits
	// (settings.waitMain), and its exit begins the deadline, for what it
	// leaves behind.
	begin := func(why string, mainSignalled, wait bool) {
		if wait && finished == nil {
			if !waiting {
				waiting = true
				h.log.Info("shutting down: " + why + "; waiting for main")
			}
			return
		}
		if deadline.IsZero() {
			began = why
			h.log.Info("shutting down: " + why)
			deadline = time.Now().Add(h.set.shutdownTimeout)
			h.exitBy = deadline.Add(shutdownMargin)
		}
		if h.set.bare && mainSignalled && finished == nil {
			// Bare: main is all there is, and it has its signal. As
			// tini, just wait for it: the shutdown (main's group
			// killed at the deadline, then the sweep) runs only if
			// main outlives the deadline or leaves processes behind.
			if overdue != nil {
				return
			}
			var err error
			if overdue, err = alarmAt(deadline); err == nil {
				return
			}
			h.log.Warn(fmt.Sprintf("no kernel alarm for the shutdown deadline (%v): shutting down now", err))
		}
		stop(mainSignalled || overdue != nil)
	}
	for {
		select {
		case sig := <-h.sigs:
			h.forward(sig)
			name := signame.Text(sig.(syscall.Signal))
			orphaned := sig == h.opts.pdeath && h.parentGone()
			switch {
			case h.beginsShutdown(sig) && !slices.Contains(h.ignoredAtStart, sig):
				// A stopped main would only get its signal at the
				// deadline's SIGKILL.
				h.resumeMain()
				if orphaned && h.set.waitMain {
					// -p SIGTERM: main has it, and the request
					// has its deadline, which a bare hinit's
					// wait would leave out.
					begin(parentDied+" ("+name+")", true, false)
				} else {
					begin("received "+name, true, h.set.waitMain)
				}
			case orphaned:
				begin(parentDied+" ("+name+")", false, false) // main gets TERM too
			}
		case s := <-h.reaper.Stops():
			if s.PID == h.main.pid {
				h.mainStopped(s.Signal)
			}
		case st := <-mainDone:
			mainDone = nil
			h.mainStatus = &st
			close(h.mainGone)
			h.restoreTerminal()
			h.logToStderrAgain()
			h.errGate.release() // the terminal is nobody's now; console copies stay off it (SPEC §2)
			if why := h.main.deathCause(st, !h.exitBy.IsZero()); why != "" {
				h.log.Warn("main exited: "+why, "pid", st.PID, "code", st.ExitStatus())
			} else {
				h.log.Info("main exited", "pid", st.PID, "code", st.ExitStatus())
			}
			if h.set.bare && (h.alone() || !h.isPID1) {
				// As tini: main was all there was, nothing to stop
				// or flush; or, as a subreaper, what main left
				// behind is not hinit's to stop (tini -s leaves it
				// running, to the next subreaper or init).
				return h.opts.exitStatus(h.set.cfg.Main, st.ExitStatus())
			}
			begin("main exited", false, false)
		case req := <-h.stopRequest:
			why := "requested"
			var answer error
			switch {
			case req.code >= 0 && !deadline.IsZero():
				// What began the shutdown decides the status: a
				// request, or an essential failure, that comes
				// during one changes nothing; hsvc says so.
				answer = notTaken(req.code, "shutdown already under way ("+began+")")
				h.log.Info(answer.Error())
			case req.code >= 0:
				explicit = req.code
				why = fmt.Sprintf("requested with exit status %d", req.code)
			}
			req.answer <- answer
			begin(why, false, false)
		case <-overdue:
			stop(true)
		case <-finished:
			if explicit >= 0 {
				return explicit
			}
			if h.mainStatus == nil { // it could not be killed: hinit's exit kills it (stopMain)
				return h.opts.exitStatus(h.set.cfg.Main, signame.ExitStatus(syscall.SIGKILL))
			}
			return h.opts.exitStatus(h.set.cfg.Main, h.mainStatus.ExitStatus())
		}
	}
}

// alone reports whether hinit has no child left at all.
func (h *hinit) alone() bool {
	select {
	case <-h.reaper.Idle():
		return true
	default:
		return false
	}
}

// forward passes a signal on to main.
func (h *hinit) forward(sig os.Signal) {
	if h.mainStatus != nil || h.main == nil {
		return
	}
	if err := syscall.Kill(h.opts.signalTarget(h.main.pid), sig.(syscall.Signal)); err != nil && err != syscall.ESRCH {
		h.log.Warn("cannot forward signal to main", "signal", sig, "err", err)
	}
}

// resumeMain sends SIGCONT to main's process group after a stop signal, as
// s6-supervise and systemd do: a main stopped (Ctrl-Z in a cooked terminal,
// SIGSTOP) keeps its SIGTERM pending and would only end by the deadline's
// SIGKILL, 137 instead of its own status. A running main ignores SIGCONT.
func (h *hinit) resumeMain() {
	if h.mainStatus != nil || h.main == nil {
		return
	}
	syscall.Kill(-h.main.pid, syscall.SIGCONT)
}

// finish shuts down after main could not run (why) and returns code.
// loop never runs then: the shutdown requests that come meanwhile (hsvc
// shutdown, an essential failure) are answered here, as loop answers those
// during a shutdown under way, instead of when hinit exits.
func (h *hinit) finish(why string, code int) int {
	close(h.mainGone)
	h.errGate.release()
	deadline := time.Now().Add(h.set.shutdownTimeout)
	h.exitBy = deadline.Add(shutdownMargin)
	done := make(chan struct{})
	defer close(done)
	go h.refuseRequests("shutdown already under way ("+why+")", done)
	h.shutdown(deadline, true)
	return code
}

// refuseRequests answers every shutdown request until done is closed:
// nothing changes the shutdown under way (why).
func (h *hinit) refuseRequests(why string, done <-chan struct{}) {
	for {
		select {
		case req := <-h.stopRequest:
			answer := notTaken(req.code, why)
			if answer != nil {
				h.log.Info(answer.Error())
			}
			req.answer <- answer
		case <-done:
			return
		}
	}
}

// fatal reports an error that stops the boot, one line per problem, about
// errcap.Max bytes of them (config.Error.Lines): PID 1's output stays
// bounded however broken hinit.yaml is; hinit check-config prints them all.
func (h *hinit) fatal(err error) {
	if ce, ok := err.(*config.Error); ok {
		for _, l := range ce.Lines() {
			fmt.Fprintf(h.stderr, "hinit: %s\n", l)
		}
		return
	}
	fmt.Fprintf(h.stderr, "hinit: %v\n", err)
}
