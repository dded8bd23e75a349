package supervise

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"hinit/config"
)

// Group is the set of services hinit supervises, by name.
type Group struct {
	ctx  context.Context
	deps *Deps

	mu       sync.Mutex
	services map[string]*Service // by name, guarded by mu
	order    []string            // names in the order they were added, guarded by mu
	changed  chan struct{}       // closed and replaced when a service is added or removed, guarded by mu
	closed   bool                // shutting down: no service may be added, guarded by mu
	// draining holds the loggers of removed services while they read what
	// their service writes until it is gone (removeLogger): no longer in
	// services, so that a dir made again under the name (hermes' profile
	// delete, then create) is a service at once, as s6 supervises it next
	// to the old process ending; Shutdown stops them too. Guarded by mu.
	draining map[*Service]bool
	// stopping holds the removed services until they are gone (Done), the
	// oldest first: a removed service frees its name and its slot at once
	// and may take its whole stop.timeout to end, so that hermes could
	// remove and make dirs of services that ignore their stop signal, each
	// holding PID 1's descriptors and goroutines for as long as its
	// timeout. Beyond Deps.MaxStopping of them the oldest is killed at
	// once (Remove); Shutdown stops them too. Guarded by mu.
	stopping []stoppingService
}

// stoppingService is a removed service still running; killed once Remove
// brought its SIGKILL forward.
type stoppingService struct {
	s      *Service
	killed bool
}

// Errors of Add.
var (
	ErrExists = errors.New("service already exists")
	ErrClosed = errors.New("shutting down: no new services")
)

// NewGroup returns an empty group whose services live until ctx ends.
func NewGroup(ctx context.Context, deps *Deps) *Group {
	return &Group{ctx: ctx, deps: deps, services: make(map[string]*Service), changed: make(chan struct{}),
		draining: make(map[*Service]bool)}
}

// Watch returns a channel that is closed the next time a service is added
// or removed.
func (g *Group) Watch() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// membershipChanged wakes Watch callers. Caller holds mu.
func (g *Group) membershipChanged() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Add starts supervising def, up or registered down.
func (g *Group) Add(def *config.Service, up bool) (*Service, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, ErrClosed
	}
	if _, ok := g.services[def.Name]; ok {
		return nil, ErrExists
	}
	if def.Logger != nil {
		return g.addWithLogger(def, up)
	}
	s := newService(g.ctx, g.deps, def, up, stdio{})
	g.services[def.Name] = s
	g.order = append(g.order, def.Name)
	g.membershipChanged()
	return s, nil
}

// Get returns the service called name, or nil.
func (g *Group) Get(name string) *Service {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.services[name]
}

// Remove stops the service and forgets it, and its logger, at once (the
// name is free for another); it stops in the background, its logger once it
// is gone (removeLogger). The service's Done channel says when it is gone.
func (g *Group) Remove(name string, requested bool) *Service {
	g.mu.Lock()
	s := g.services[name]
	delete(g.services, name)
	if s != nil {
		gone := []string{name}
		if l := s.logger; l != nil && g.services[l.name] == l {
			delete(g.services, l.name)
			g.draining[l] = true
			gone = append(gone, l.name)
		}
		g.order = slices.DeleteFunc(g.order, func(n string) bool { return slices.Contains(gone, n) })
		g.membershipChanged()
	}
	var over *Service
	if s != nil {
		over = g.track(s) // with the name's removal: Shutdown and Wait never miss it
	}
	g.mu.Unlock()
	if s != nil {
		g.untrack(s, over)
		s.Remove(requested)
		if s.logger != nil {
			go g.removeLogger(s, requested)
		}
	}
	return s
}

// track keeps s, removed, in stopping until it is gone (untrack), and
// returns the oldest removed service not killed yet when more than
// Deps.MaxStopping are still stopping. Caller holds mu, and calls untrack
// once it has let go of it.
func (g *Group) track(s *Service) (over *Service) {
	g.stopping = append(g.stopping, stoppingService{s: s})
	if max := g.deps.MaxStopping; max > 0 && len(g.stopping) > max {
		for i := range g.stopping {
			if !g.stopping[i].killed {
				g.stopping[i].killed, over = true, g.stopping[i].s
				break
			}
		}
	}
	return over
}

// untrack drops s from stopping once it is gone, and kills over, what
// track returned, now.
func (g *Group) untrack(s, over *Service) {
	go func() {
		<-s.Done()
		g.mu.Lock()
		g.stopping = slices.DeleteFunc(g.stopping, func(e stoppingService) bool { return e.s == s })
		g.mu.Unlock()
	}()
	if over != nil {
		g.deps.Log.Warn(fmt.Sprintf("more than %d removed services are still stopping: the oldest is killed now", g.deps.MaxStopping),
			"svc", over.Name())
		go over.Shutdown(context.Background(), time.Now()) // its SIGKILL, now (ErrRemoved if it is gone meanwhile), without waiting on its goroutine here
	}
}

// Wait returns once the goroutine of every service has ended, each log
// flushed and closed: those listed, the removed ones still stopping and
// the loggers of removed services still draining (after Shutdown and the
// end of the group's ctx). Once ctx ends it stops waiting and returns the
// names of those still running: a goroutine stuck in a step (a write to a
// hung volume) must not keep the container from exiting.
func (g *Group) Wait(ctx context.Context) (running []string) {
	g.mu.Lock()
	all := g.everyService()
	g.mu.Unlock()
	for _, s := range all {
		select {
		case <-s.Done():
			continue // gone, even when ctx has ended too
		default:
		}
		select {
		case <-s.Done():
		case <-ctx.Done():
			running = append(running, s.Name())
		}
	}
	return running
}

// everyService is every service whose goroutine may still run: those
// listed, in the order they were added, then the removed ones still
// stopping and the loggers of removed services still draining (stopped at
// shutdown as any, and waited for). One snapshot under mu, so that a
// service removed meanwhile is in it once. Caller holds mu.
func (g *Group) everyService() []*Service {
	all := make([]*Service, 0, len(g.order)+len(g.stopping)+len(g.draining))
	for _, n := range g.order {
		all = append(all, g.services[n])
	}
	for _, e := range g.stopping {
		all = append(all, e.s)
	}
	for l := range g.draining {
		all = append(all, l)
	}
	return all
}

// List returns the services in the order they were added.
func (g *Group) List() []*Service {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*Service, 0, len(g.order))
	for _, n := range g.order {
		out = append(out, g.services[n])
	}
	return out
}

// Shutdown sends every service its stop signal at once, with SIGKILL due at
// its stop.timeout or at deadline, whichever comes first, and returns when
// none of them runs any more or ctx ends. A logger (s6 log/run) is stopped
// after its service is gone instead, so that it logs what the service wrote
// while stopping (stopLogger). From then on no service is added and none
// starts again.
func (g *Group) Shutdown(ctx context.Context, deadline time.Time) {
	g.mu.Lock()
	g.closed = true
	list := g.everyService()
	g.mu.Unlock()
	loggers := map[*Service]bool{}
	for _, s := range list {
		if s.logger != nil {
			loggers[s.logger] = true
		}
	}
	var wg sync.WaitGroup
	for _, s := range list {
		if loggers[s] {
			continue // stopped after its service
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Shutdown(ctx, deadline)
			s.WaitFor(ctx, func(st Status) bool { return !st.Running() && st.State != StateBackoff })
			if s.logger != nil {
				stopLogger(ctx, s.logger, deadline)
			}
		}()
	}
	wg.Wait()
}
