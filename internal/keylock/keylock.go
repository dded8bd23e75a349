// Package keylock locks by key: one holder per key at a time, holders of
// other keys never waiting for it. An entry lives while it is held or
// waited for, so the map is as big as the requests under way, however many
// keys (service names, state files) come and go over a long uptime.
package keylock

import "sync"

// Map is a set of locks by key; its zero value is ready to use.
type Map struct {
	mu    sync.Mutex
	locks map[string]*entry // guarded by mu
}

// entry is one key's lock and how many hold it or wait for it.
type entry struct {
	sync.Mutex
	refs int // guarded by Map.mu
}

// Lock waits until key is free, takes it, and returns the function that
// gives it back.
func (m *Map) Lock(key string) (unlock func()) {
	m.mu.Lock()
	if m.locks == nil {
		m.locks = map[string]*entry{}
	}
	e := m.locks[key]
	if e == nil {
		e = &entry{}
		m.locks[key] = e
	}
	e.refs++
	m.mu.Unlock()
	e.Lock()
	return func() {
		e.Unlock()
		m.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(m.locks, key)
		}
		m.mu.Unlock()
	}
}

// Len is how many keys are held or waited for.
func (m *Map) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.locks)
}
