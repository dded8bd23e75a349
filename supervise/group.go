package supervise

import (
	"context"
	"errors"
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
}

// Errors of Add.
var (
	ErrExists = errors.New("service already exists")
	ErrClosed = errors.New("shutting down: no new services")
)

// NewGroup returns an empty group whose services live until ctx ends.
func NewGroup(ctx context.Context, deps *Deps) *Group {
	return &Group{ctx: ctx, deps: deps, services: make(map[string]*Service), changed: make(chan struct{})}
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

// Remove stops the service and forgets it once it is down. It returns at
// once; the service's Done channel says when it is gone.
func (g *Group) Remove(name string, requested bool) *Service {
	g.mu.Lock()
	s := g.services[name]
	delete(g.services, name)
	if s != nil {
		g.order = slices.DeleteFunc(g.order, func(n string) bool { return n == name })
		g.membershipChanged()
	}
	g.mu.Unlock()
	if s != nil {
		s.Remove(requested)
		if s.logger != nil {
			go g.removeLogger(s, requested)
		}
	}
	return s
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
	g.mu.Unlock()
	list := g.List()
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
			s.Shutdown(deadline)
			s.WaitFor(ctx, func(st Status) bool { return !st.Running() && st.State != StateBackoff })
			if s.logger != nil {
				stopLogger(ctx, s.logger, deadline)
			}
		}()
	}
	wg.Wait()
}
