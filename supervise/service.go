package supervise

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"hinit/account"
	"hinit/cgroup"
	"hinit/childsig"
	"hinit/config"
	"hinit/reaper"
	"hinit/svclog"
)

// Spawner starts processes and reports their exits; *reaper.Reaper is the
// real one.
type Spawner interface {
	Start(argv0 string, argv []string, attr *syscall.ProcAttr, sig childsig.State) (int, <-chan reaper.Status, error)
}

// Deps is what all services of a Group share.
type Deps struct {
	Spawner     Spawner
	Log         *slog.Logger
	Environ     func() map[string]string // container environment, read afresh at every start; not modified
	Console     io.Writer                // where console copies go; nil in TTY mode
	Root        bool                     // hinit runs as root and may set credentials
	DefaultUser string                   // user of services that name none ("" = hinit's own)
	// Marker writes a planned-stop marker for pid at path, as owner, before
	// a requested stop. Nil means markers are not written.
	Marker func(path string, pid int, owner *account.Account) error
	// Failed is told when an essential service failed, with the exit
	// status the container should end with.
	Failed func(name string, status int)
	// MaxStopping is the most removed services left to end by their own
	// stop.timeout at once; beyond it the oldest is killed (Group.track).
	// 0: no limit.
	MaxStopping int
	// Cgroup are the container cgroup's counts a death is judged by
	// (cgroup.Container): the OOM killer's kills, the pids limit's
	// refusals; a nil counter is not read.
	Cgroup cgroup.Counts
}

// Errors of service commands.
var (
	ErrRemoved      = errors.New("service was removed")
	ErrNotRunning   = errors.New("service is not running")
	ErrProcessEnded = errors.New("its process has exited; what it left in its process group is being stopped")
	ErrShuttingDown = errors.New("the container is shutting down")
)

// Service is one supervised service. Its methods may be called from any
// goroutine; they hand commands to the service's own goroutine.
type Service struct {
	name   string
	logger *Service // the logger reading its stdout (s6 log/run), or nil
	cmds   chan command
	done   chan struct{} // closed when the service goroutine has ended

	mu      sync.Mutex
	status  Status        // guarded by mu
	changed chan struct{} // closed and replaced at every change, guarded by mu

	// liveLog is the service's current log, whose lost lines every snapshot
	// reads afresh: lines are lost while the state stays the same.
	liveLog atomic.Pointer[svclog.Log]
}

type op int

const (
	opStart op = iota
	opStop
	opRestart
	opSignal
	opUpdate
	opRemove
	opOnce      // s6-svc -O: no restart after the running process exits
	opStartOnce // s6-svc -o: up for one run
)

type command struct {
	op        op
	sig       syscall.Signal
	process   bool // signal: the process only, not its group
	restart   bool // signal: its exit is a requested restart
	def       *config.Service
	requested bool      // a user's request: write the planned-stop marker
	deadline  time.Time // stop: SIGKILL no later than this (zero: stop.timeout)
	final     bool      // the container's shutdown: never start again
	reply     chan error
}

// newService makes the first start of a service defined by def in the
// caller's goroutine, so services start in the order they are added, then
// hands the service to a goroutine of its own. The start's deep call stack
// stays on the caller's: a thousand idle service goroutines keep small
// stacks (2 MB less at 1000 services). When up is false it is registered
// down.
func newService(ctx context.Context, deps *Deps, def *config.Service, up bool, io stdio) *Service {
	s := &Service{
		name:    def.Name,
		cmds:    make(chan command),
		done:    make(chan struct{}),
		changed: make(chan struct{}),
	}
	s.status = Status{Name: def.Name, State: StateDown, Want: wantWord(up), Since: time.Now(), Source: def.Source,
		Essential: def.Essential, Protected: def.Protected, LogDir: def.Log.Dir}
	r := &runner{Service: s, deps: deps, def: def, io: io}
	r.begin(up)
	go r.loop(ctx)
	return s
}

// Name is the service's name.
func (s *Service) Name() string { return s.name }

// Status returns a snapshot of the service.
func (s *Service) Status() Status {
	st, _ := s.Watch()
	return st
}

// Watch returns a snapshot and a channel that is closed at the next change
// of state. LostLines is read at the call: it moves without a change.
func (s *Service) Watch() (Status, <-chan struct{}) {
	s.mu.Lock()
	st, changed := s.status, s.changed
	s.mu.Unlock()
	if l := s.liveLog.Load(); l != nil {
		st.LostLines = l.Lost()
	}
	return st, changed
}

// WaitFor blocks until cond holds for the service's status, or ctx ends.
func (s *Service) WaitFor(ctx context.Context, cond func(Status) bool) (Status, error) {
	for {
		st, changed := s.Watch()
		if cond(st) {
			return st, nil
		}
		select {
		case <-changed:
		case <-s.done:
			return s.Status(), ErrRemoved
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

// Start asks for the service to be up. A failed or exited service starts
// again with its failure count reset.
func (s *Service) Start() error { return s.send(command{op: opStart}) }

// Once keeps the running process from being restarted when it exits
// (s6-svc -O); a service that is not running stays down.
func (s *Service) Once() error { return s.send(command{op: opOnce}) }

// StartOnce starts the service for one run (s6-svc -o): when that process
// exits, the service stays down.
func (s *Service) StartOnce() error { return s.send(command{op: opStartOnce}) }

// Stop asks for the service to be down. requested marks a user's request,
// as opposed to the container going down: only then is a planned-stop
// marker written.
func (s *Service) Stop(requested bool) error {
	return s.send(command{op: opStop, requested: requested})
}

// Shutdown stops the service for the container's shutdown: stop signal now,
// SIGKILL after stop.timeout or at deadline, whichever comes first. It
// waits for the service's goroutine to take the command until ctx ends.
func (s *Service) Shutdown(ctx context.Context, deadline time.Time) error {
	return s.sendCtx(ctx, command{op: opStop, deadline: deadline, final: true})
}

// Restart stops the service (on request) and starts it again at once.
func (s *Service) Restart() error { return s.send(command{op: opRestart, requested: true}) }

// Signal sends sig to the service's process group.
func (s *Service) Signal(sig syscall.Signal) error { return s.send(command{op: opSignal, sig: sig}) }

// SignalProcess sends sig to the service's process only, as s6-svc's
// signal letters do: its children in the group (a gateway's tool servers)
// do not get it.
func (s *Service) SignalProcess(sig syscall.Signal) error {
	return s.send(command{op: opSignal, sig: sig, process: true})
}

// SignalRestart sends sig to the service's process (only, with process)
// as a request to restart it, as s6-svc -t and -r are: the exit it causes
// restarts the service at once, as a requested restart does (Restart),
// neither a quick failure nor a step towards give_up.
//
// A sig of StopSignal is the stop signal of the definition the process
// runs (s6-svc -r: its dir's down-signal, as s6-svc -d stops it).
func (s *Service) SignalRestart(sig syscall.Signal, process bool) error {
	return s.send(command{op: opSignal, sig: sig, process: process, restart: true})
}

// Update replaces the service's definition; it applies at the next start.
func (s *Service) Update(def *config.Service) error { return s.send(command{op: opUpdate, def: def}) }

// Remove stops the service and ends its goroutine; Done is closed after.
func (s *Service) Remove(requested bool) error {
	return s.send(command{op: opRemove, requested: requested})
}

// Done is closed once a removed service has stopped and let go of its log.
func (s *Service) Done() <-chan struct{} { return s.done }

func (s *Service) send(c command) error { return s.sendCtx(context.Background(), c) }

// sendCtx hands c to the service's goroutine and returns its answer, or
// ctx's error once ctx ends first: a goroutine stuck in a step (a write to
// a hung volume, say) must not hold the container's shutdown, which gives
// up on it at its deadline (Group.Shutdown). The reply channel is
// buffered, so a goroutine that answers later never blocks.
func (s *Service) sendCtx(ctx context.Context, c command) error {
	c.reply = make(chan error, 1)
	select {
	case s.cmds <- c:
	case <-s.done:
		return ErrRemoved
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-c.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publish stores a new snapshot and wakes every watcher.
func (s *Service) publish(st Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = st
	close(s.changed)
	s.changed = make(chan struct{})
}
