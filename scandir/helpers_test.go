package scandir

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// harness runs a Watcher and plays the consumer: it applies every Event to a
// map, as the supervisor would, and records when each arrived.
type harness struct {
	t    *testing.T
	dir  string
	w    *Watcher
	logs *lockedBuffer
	out  chan Event
	done chan error

	mu       sync.Mutex
	state    map[string]Event     // name -> last Event, guarded by mu
	arrived  map[string]time.Time // name -> when its last Event arrived, guarded by mu
	history  []Event              // every Event in order, guarded by mu
	synced   bool                 // guarded by mu
	changed  chan struct{}        // pinged after each Event
	barriers int
}

// start runs a Watcher of a fresh temp scandir (or dir, when set up already)
// and consumes its events until the test ends.
func start(t *testing.T, dir string, max int, setup func(*Watcher)) *harness {
	t.Helper()
	h := newHarness(t, dir, max, setup)
	go h.consume()
	h.waitFor("first scan", func() bool { return h.synced })
	return h
}

func newHarness(t *testing.T, dir string, max int, setup func(*Watcher)) *harness {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	h := &harness{
		t: t, dir: dir, logs: logs, w: New(dir, max, log),
		out: make(chan Event), done: make(chan error, 1),
		state: map[string]Event{}, arrived: map[string]time.Time{},
		changed: make(chan struct{}, 1),
	}
	if setup != nil {
		setup(h.w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { h.done <- h.w.Run(ctx, h.out) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-h.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
			close(h.out) // Run was the only sender; this ends consume
		case <-time.After(5 * time.Second):
			t.Errorf("Run did not return after cancel")
		}
	})
	return h
}

func (h *harness) consume() {
	for ev := range h.out {
		h.record(ev)
	}
}

func (h *harness) record(ev Event) {
	h.mu.Lock()
	if ev.Barrier != nil {
		h.mu.Unlock()
		close(ev.Barrier) // what came before is recorded
		return
	}
	if ev.Synced {
		h.synced = true
	} else {
		h.state[ev.Name] = ev
		h.arrived[ev.Name] = time.Now()
		h.history = append(h.history, ev)
	}
	h.mu.Unlock()
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// entry returns what the consumer knows of name: nil when gone or refused.
func (h *harness) entry(name string) *Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state[name].Entry
}

// waitFor checks cond under the harness lock after each Event, failing the
// test if it does not hold within 5 seconds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		ok := cond()
		h.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-h.changed:
		case <-deadline.C:
			h.t.Fatalf("timed out waiting for %s; state: %v", what, h.summary())
		}
	}
}

// waitEntry waits until name is reported with an Entry satisfying cond.
func (h *harness) waitEntry(name string, cond func(e *Entry) bool) *Entry {
	h.t.Helper()
	var got *Entry
	h.waitFor(name+" reported", func() bool {
		got = h.state[name].Entry
		return got != nil && cond(got)
	})
	return got
}

// waitGone waits until name is reported gone (or was never reported).
func (h *harness) waitGone(name string) {
	h.t.Helper()
	h.waitFor(name+" gone", func() bool {
		ev := h.state[name]
		return ev.Entry == nil && !ev.Refused
	})
}

// barrier adds a service and waits for its Event (accepted or refused):
// every event queued before it has then been handled, so what was not
// reported by now will not be.
func (h *harness) barrier() {
	h.t.Helper()
	h.barriers++
	name := "barrier-" + strconv.Itoa(h.barriers)
	h.install(name, "command: [true]\n")
	h.waitFor(name, func() bool { _, ok := h.state[name]; return ok })
}

func (h *harness) summary() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for n, ev := range h.state {
		b.WriteString(n)
		switch {
		case ev.Refused:
			b.WriteString("=refused ")
		case ev.Entry == nil:
			b.WriteString("=gone ")
		default:
			b.WriteString("=up ")
		}
	}
	return b.String()
}

// install writes a service dir the way hsvc register does: build it under a
// dot name, then rename it into place.
func (h *harness) install(name, yaml string) {
	h.t.Helper()
	tmp := filepath.Join(h.dir, "."+name+".tmp")
	must(h.t, os.Mkdir(tmp, 0o755))
	must(h.t, os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte(yaml), 0o644))
	must(h.t, os.Rename(tmp, filepath.Join(h.dir, name)))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// lockedBuffer is a log sink the Watcher and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// tryPoll checks cond until it holds or 5 seconds pass, for conditions no
// Event announces.
func tryPoll(cond func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return cond()
		}
	}
	return true
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !tryPoll(cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// queued is how many bytes of events wait in an inotify queue (FIONREAD,
// which x/sys/unix spells TIOCINQ on Linux).
func queued(t *testing.T, fd int) int {
	t.Helper()
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	must(t, err)
	return n
}

func readInt(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	must(t, err)
	return n
}

func mkfifo(path string) error { return unix.Mkfifo(path, 0o644) }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
