package bench

import (
	"bufio"
	"strconv"
	"strings"
	"time"
)

// event is one line a probe wrote on the FIFO: "KIND NAME PID MONO [EXTRA...]".
type event struct {
	kind  string // t0, up, armed, reaped
	name  string
	pid   int   // in the init's namespace
	at    int64 // CLOCK_MONOTONIC, ns
	extra []string
}

// read parses the FIFO into in.events until the FIFO is closed.
func (in *instance) read() {
	sc := bufio.NewScanner(in.fifo)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		pid, _ := strconv.Atoi(f[2])
		at, _ := strconv.ParseInt(f[3], 10, 64)
		in.mu.Lock()
		in.events = append(in.events, event{kind: f[0], name: f[1], pid: pid, at: at, extra: f[4:]})
		close(in.changed)
		in.changed = make(chan struct{})
		in.mu.Unlock()
	}
}

// mark is the index of the next event: waits that start from it see only
// what happens from now on.
func (in *instance) mark() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.events)
}

// waitEvent looks at events from index from on until match returns true,
// and returns that event and the index after it.
func (in *instance) waitEvent(deadline time.Time, from int, match func(event) bool) (event, int, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		in.mu.Lock()
		evs, changed := in.events, in.changed
		in.mu.Unlock()
		for ; from < len(evs); from++ {
			if match(evs[from]) {
				return evs[from], from + 1, nil
			}
		}
		select {
		case <-changed:
		case <-timer.C:
			return event{}, from, errTimeout
		case <-in.gone:
			select {
			case <-changed:
			case <-time.After(50 * time.Millisecond): // the FIFO may still hold the last lines
				return event{}, from, errGone
			}
		}
	}
}

// waitUp waits until every name has reported "up" (from index from on)
// and returns the latest of their stamps.
func (in *instance) waitUp(deadline time.Time, from int, names []string) (int64, error) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var last int64
	_, _, err := in.waitEvent(deadline, from, func(e event) bool {
		if e.kind == "up" && want[e.name] {
			delete(want, e.name)
			last = max(last, e.at)
		}
		return len(want) == 0
	})
	return last, err
}

// upsOf returns the stamps of every "up" of name so far.
func (in *instance) upsOf(name string) []event {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []event
	for _, e := range in.events {
		if e.kind == "up" && e.name == name {
			out = append(out, e)
		}
	}
	return out
}
