package svclog

import (
	"sync"
	"time"
)

// queueBytes bounds the text one output may have waiting: what a slow
// output can cost in memory, per service.
const queueBytes = 256 << 10

// lineOverhead is what a queued line costs besides its text.
const lineOverhead = 64

// stallWait is how long a full queue holds the reader (and through the
// pipe, the service) for its writer to make room. A writer that makes none
// in that time is stalled: its lines are refused at once until it takes
// again, so a stalled output costs the service at most this once.
const stallWait = time.Second

// queue is the bounded queue between the reader and one output's writer.
// When it is full, push waits for the writer to make room, as long as the
// writer keeps making it: a burst faster than the output loses nothing, it
// holds the service back. Only a stalled writer (no room made for
// stallWait) makes push refuse lines; they are counted, and the count rides
// on the next line accepted.
//
// A writer goroutine runs only while there is something to write: push and
// close say when one must be started, take says when it must end. So an idle
// service costs no writer goroutine, and at most one runs per output.
type queue struct {
	mu      sync.Mutex
	lines   []line        // guarded by mu
	size    int           // bytes held by lines, guarded by mu
	dropped uint64        // lines refused since the last accepted one, guarded by mu
	closed  bool          // no more pushes, guarded by mu
	busy    bool          // a writer is running, guarded by mu
	stalled bool          // the writer made no room for stallWait; guarded by mu, cleared at its next take
	room    chan struct{} // made by a waiting push, closed by the next take; guarded by mu
}

// push queues l, waiting while the queue is full and its writer is not
// stalled, or reports ok == false when the line is refused. start says the
// caller must start a writer.
func (q *queue) push(l line) (ok, start bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	cost := len(l.text) + lineOverhead
	if q.size+cost > queueBytes && !q.stalled {
		q.waitRoom(cost)
	}
	if q.size+cost > queueBytes {
		q.dropped++
		return false, false
	}
	l.dropped, q.dropped = q.dropped, 0
	q.lines = append(q.lines, l)
	q.size += cost
	return true, q.claim()
}

// waitRoom waits, with q.mu held and released while waiting, until cost
// fits or stallWait has passed; then the writer is stalled. The queue is
// full, so a writer is running (busy) and will take.
func (q *queue) waitRoom(cost int) {
	timer := time.NewTimer(stallWait)
	defer timer.Stop()
	for q.size+cost > queueBytes {
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
			q.mu.Lock()
		case <-timer.C:
			q.mu.Lock()
			if q.size+cost > queueBytes {
				q.stalled = true
			}
			return
		}
	}
}

// close says no more lines will come; start says the caller must start a
// writer to finish the output.
func (q *queue) close() (start bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	return q.claim()
}

// claim marks a writer as running and reports whether none was. q.mu is held.
func (q *queue) claim() bool {
	if q.busy {
		return false
	}
	q.busy = true
	return true
}

// take returns every queued line. With none left it either ends the
// writer (more == false, final == false: start again on the next push) or,
// when the queue is closed, tells it to finish the output (final == true,
// with the lines dropped at the very end).
func (q *queue) take() (batch []line, dropped uint64, more, final bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch, q.lines, q.size = q.lines, nil, 0
	if len(batch) > 0 {
		q.stalled = false
		if q.room != nil {
			close(q.room)
			q.room = nil
		}
		return batch, 0, true, false
	}
	if q.closed {
		dropped, q.dropped = q.dropped, 0
		return nil, dropped, false, true
	}
	q.busy = false
	return nil, 0, false, false
}
