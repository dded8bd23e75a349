package control

import (
	"errors"
	"fmt"
	"sync"
)

// errBusy: a connection or a wait was refused because its caller's share of
// the server is full. The message of the wrapping error says whose share.
var errBusy = errors.New("hinit is busy")

// limits are the shares of the server (see the protocol's Limits). Root has
// its own share, so no other user can take root's answers away; every
// other uid has a share of its own inside a share of all of them.
type limits struct {
	root                int // root's connections, waits included
	conns, connsPerUser int // other users' connections being read or served
	waits, waitsPerUser int // other users' long requests (wait, --wait)
}

// count is what one class of callers holds at once.
type count struct{ conns, waits int }

// admission hands out the server's slots. A slot is taken once SO_PEERCRED
// has said who is calling, before anything is read; a long request moves
// its slot from conns to waits, so that waits never hold the slots the
// short requests need.
type admission struct {
	lim    limits
	mu     sync.Mutex
	root   count          // guarded by mu
	others count          // all non-root uids together, guarded by mu
	byUID  map[int]*count // non-root uids holding a slot, guarded by mu
}

func newAdmission(lim limits) *admission {
	return &admission{lim: lim, byUID: map[int]*count{}}
}

// slot is one admitted connection; release gives it back, once.
type slot struct {
	a    *admission
	uid  int
	wait bool // moved to waits
	done bool
}

// admit takes a connection slot for uid, or fails with errBusy.
func (a *admission) admit(uid int) (*slot, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if uid == 0 {
		if a.root.conns >= a.lim.root {
			return nil, fmt.Errorf("%w: root has %d requests open", errBusy, a.root.conns)
		}
		a.root.conns++
		return &slot{a: a, uid: uid}, nil
	}
	c := a.byUID[uid]
	switch {
	case c != nil && c.conns >= a.lim.connsPerUser:
		return nil, fmt.Errorf("%w: uid %d has %d requests open (at most %d per user)", errBusy, uid, c.conns, a.lim.connsPerUser)
	case a.others.conns >= a.lim.conns:
		return nil, fmt.Errorf("%w: %d requests of users other than root open", errBusy, a.others.conns)
	}
	if c == nil {
		c = &count{}
		a.byUID[uid] = c
	}
	c.conns++
	a.others.conns++
	return &slot{a: a, uid: uid}, nil
}

// toWait moves the slot from conns to waits, for a request that may take
// long; it fails with errBusy (keeping the slot as it was) when the
// caller's share of waits is full. Root's slot stays where it is.
func (s *slot) toWait() error {
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.uid == 0 || s.wait {
		return nil
	}
	c := a.byUID[s.uid]
	switch {
	case c.waits >= a.lim.waitsPerUser:
		return fmt.Errorf("%w: uid %d has %d waits open (at most %d per user)", errBusy, s.uid, c.waits, a.lim.waitsPerUser)
	case a.others.waits >= a.lim.waits:
		return fmt.Errorf("%w: %d waits of users other than root open", errBusy, a.others.waits)
	}
	c.conns--
	a.others.conns--
	c.waits++
	a.others.waits++
	s.wait = true
	return nil
}

// release gives the slot back; a second call does nothing.
func (s *slot) release() {
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	if s.uid == 0 {
		a.root.conns--
		return
	}
	c := a.byUID[s.uid]
	if s.wait {
		c.waits--
		a.others.waits--
	} else {
		c.conns--
		a.others.conns--
	}
	if *c == (count{}) {
		delete(a.byUID, s.uid)
	}
}
