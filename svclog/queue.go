package svclog

import "sync"

// queueBytes bounds the text one output may have waiting: what a slow
// output can cost in memory, per service.
const queueBytes = 256 << 10

// lineOverhead is what a queued line costs besides its text.
const lineOverhead = 64

// queue is the bounded queue between the reader and one output's writer.
// push never blocks: when the queue is full the line is refused and
// counted, and the count rides on the next line accepted.
type queue struct {
	mu      sync.Mutex
	lines   []line // guarded by mu
	size    int    // bytes held by lines, guarded by mu
	dropped uint64 // lines refused since the last accepted one, guarded by mu
	closed  bool   // no more pushes, guarded by mu
	ready   chan struct{}
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

// push queues l, or reports false when the queue is full.
func (q *queue) push(l line) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	cost := len(l.text) + lineOverhead
	if q.size+cost > queueBytes {
		q.dropped++
		return false
	}
	l.dropped, q.dropped = q.dropped, 0
	q.lines = append(q.lines, l)
	q.size += cost
	q.wake()
	return true
}

// close tells the writer that no more lines will come.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.wake()
}

// wake signals the writer; q.mu is held.
func (q *queue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take waits for lines and returns all of them. When the queue is closed
// and empty it returns more == false and the lines dropped at the very end.
func (q *queue) take() (batch []line, dropped uint64, more bool) {
	for {
		q.mu.Lock()
		batch, q.lines, q.size = q.lines, nil, 0
		closed := q.closed
		if closed && len(batch) == 0 {
			dropped, q.dropped = q.dropped, 0
		}
		q.mu.Unlock()
		if len(batch) > 0 || closed {
			return batch, dropped, len(batch) > 0 || !closed
		}
		<-q.ready
	}
}
