package manager

import (
	"context"
	"os"
	"sync"
	"time"

	"hinit/asuser"
	"hinit/control"
	"hinit/reconcile"
	"hinit/scandir"
	"hinit/supervise"
)

// ApplyEvent applies one scandir event as the manager's watcher loop does,
// for a test to deliver an event as late as the loop may.
func ApplyEvent(m *Manager, ev scandir.Event) { m.dyn.apply(ev) }

// FailRemovals makes every removal of a scandir dir fail with err until
// the returned function is called.
func FailRemovals(err error) (restore func()) {
	removeAll = func(*os.File, string) error { return err }
	return func() { removeAll = asuser.RemoveAllAt }
}

// HoldRemovals makes every removal of a scandir dir wait for release,
// before the dir is removed or, with after, once it is: the moments of an
// unregister when the name is no service and its dir is still there, or
// gone but the unregister not over. Restore removeAll with the returned
// restore once no removal is under way.
func HoldRemovals(after bool) (release, restore func()) {
	gate := make(chan struct{})
	removeAll = func(d *os.File, name string) error {
		if after {
			defer func() { <-gate }()
		} else {
			<-gate
		}
		return asuser.RemoveAllAt(d, name)
	}
	return func() { close(gate) }, func() { removeAll = asuser.RemoveAllAt }
}

// Leaving reports whether name's unregister is not over.
func Leaving(m *Manager, name string) bool {
	_, ok := m.dyn.leavingState(name)
	return ok
}

// CountLeaveWaits counts the waits for an unregister under way that began,
// by name, until restore.
func CountLeaveWaits() (count func(name string) int, restore func()) {
	var mu sync.Mutex
	n := map[string]int{}
	leftWaitBegins = func(name string) {
		mu.Lock()
		defer mu.Unlock()
		n[name]++
	}
	return func(name string) int {
			mu.Lock()
			defer mu.Unlock()
			return n[name]
		}, func() {
			leftWaitBegins = func(string) {}
		}
}

// HoldRequest holds the request lock of the service name, as a request
// under way does, until release.
func HoldRequest(m *Manager, name string) (release func()) { return m.lockRequest(name) }

// ApplyDesired is applyDesired with the request's apply replaced by apply,
// for a test to apply a request as a moment of the service's life does.
func ApplyDesired(m *Manager, name, verb string, apply func(s *supervise.Service) error) error {
	return ApplyDesiredCtx(context.Background(), m, name, verb, apply)
}

// ApplyDesiredCtx is ApplyDesired for a request whose context is ctx.
func ApplyDesiredCtx(ctx context.Context, m *Manager, name, verb string, apply func(s *supervise.Service) error) error {
	s := m.group.Get(name)
	_, err := m.applyDesired(ctx, s, verb, false, func() error { return apply(s) })
	return err
}

// StartStop runs the verb of req (start, stop, restart, once) on svcs, as
// a request whose targets were looked up before the call.
func StartStop(m *Manager, req *control.Request, svcs ...*supervise.Service) *control.Response {
	return m.startStop(context.Background(), svcs, req)
}

// Service is the service called name, nil when there is none; Forget
// removes it from the group, as an unregister does.
func Service(m *Manager, name string) *supervise.Service { return m.group.Get(name) }
func Forget(m *Manager, name string)                     { m.group.Remove(name, true) }

// CountRemovals makes every removal of a scandir dir wait for release, and
// counts how many wait at once at most, until restore.
func CountRemovals() (most func() int, release, restore func()) {
	g := newHeldGate()
	removeAll = func(d *os.File, name string) error {
		g.pass()
		return asuser.RemoveAllAt(d, name)
	}
	return g.most, g.release, func() { removeAll = asuser.RemoveAllAt }
}

// HoldPublishedUntilGivenUp holds each register once its slot is published
// until its request's context ends (its client left), telling reached
// first.
func HoldPublishedUntilGivenUp(reached chan<- struct{}) (restore func()) {
	slotPublished = func(ctx context.Context) {
		reached <- struct{}{}
		<-ctx.Done()
	}
	return func() { slotPublished = func(context.Context) {} }
}

// CountPublishes makes every register's publish wait for release, and
// counts how many wait at once at most, until restore.
func CountPublishes() (most func() int, release, restore func()) {
	g := newHeldGate()
	publishSlot = func(scandir string, slot reconcile.Slot) error {
		g.pass()
		return reconcile.PublishSlot(scandir, slot)
	}
	return g.most, g.release, func() { publishSlot = reconcile.PublishSlot }
}

// heldGate holds whoever passes it until release, counting how many it
// held at once at most.
type heldGate struct {
	mu       sync.Mutex
	now, top int // guarded by mu
	open     chan struct{}
}

func newHeldGate() *heldGate { return &heldGate{open: make(chan struct{})} }

func (g *heldGate) pass() {
	g.mu.Lock()
	g.now++
	g.top = max(g.top, g.now)
	g.mu.Unlock()
	<-g.open
	g.mu.Lock()
	g.now--
	g.mu.Unlock()
}

func (g *heldGate) most() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.top
}

func (g *heldGate) release() { close(g.open) }

// HoldEvents holds the manager's event goroutine before it applies an
// event of name, as a watcher busy reading other dirs would, until
// release; restore ends the hold of name.
func HoldEvents(name string) (release, restore func()) {
	gate := make(chan struct{})
	heldEvents.Lock()
	heldEvents.gates[name] = gate
	heldEvents.Unlock()
	open := sync.OnceFunc(func() { close(gate) })
	return open, func() {
		heldEvents.Lock()
		delete(heldEvents.gates, name)
		heldEvents.Unlock()
		open() // an event held still goes on
	}
}

// heldEvents are HoldEvents' gates by name. The hook reading them is set
// once, before any manager runs: an event goroutine outlives its test
// (nothing waits for its end), and a hook set and put back by each test
// raced with those still reading it.
var heldEvents = struct {
	sync.Mutex
	gates map[string]chan struct{}
}{gates: map[string]chan struct{}{}}

func init() {
	eventArrived = func(ev scandir.Event) {
		heldEvents.Lock()
		gate := heldEvents.gates[ev.Name]
		heldEvents.Unlock()
		if gate != nil {
			<-gate
		}
	}
}

// ShortenRegisterWait makes a register answer after d at most, whether
// the watcher has read its dir or not, until restore.
func ShortenRegisterWait(d time.Duration) (restore func()) {
	registerWait = d
	return func() { registerWait = control.QuickAnswer }
}

// QueueSettles hands the test each read-back of a desired state hinit
// wrote (settleDesired), to run when it chooses, until restore.
func QueueSettles() (settles <-chan func(), restore func()) {
	c := make(chan func(), 16)
	old := afterSettle
	afterSettle = func(f func()) { c <- f }
	return c, func() { afterSettle = old }
}
