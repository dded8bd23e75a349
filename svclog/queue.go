package svclog

import (
	"sync"
	"sync/atomic"
	"time"
)

// queueBytes bounds the text one output may have waiting or being written:
// what a slow output can cost in memory, per service.
const queueBytes = 256 << 10

// poolBytes bounds what the outputs of one kind, of every log, hold
// together, past one line each (see pool): the hermes user may run up to
// services_max services whose lines flood the console they share, each
// with four retired logs still written to, and their queues' own bounds
// would then add up to gigabytes of PID 1.
const poolBytes = 32 << 20

// pool is the budget the queues of one kind of output share: a queue that
// holds lines takes another only while the pool has room for it, and
// otherwise waits for its own writer as it does when full (the line is
// refused once that writer stalls). A queue that holds nothing always
// takes one line: an output that keeps up never waits on the others', and
// one that is slow is held back, not starved. So what the queues hold is
// at most the pool's limit plus one line (MaxLine and its overhead) per
// output.
type pool struct {
	used  atomic.Int64 // cost of the lines queued or being written in all queues
	limit int64
}

// The pools of the process: the services' console copies (one console,
// slow for all at once, which any service may flood) and their log files
// (one volume, which may hang for all at once), apart, so that a flood of
// the console never leaves the files one line in flight. hinit's own
// stderr (Stream) has none: its lines must not wait on the services'.
var (
	consolePool = &pool{limit: poolBytes}
	filePool    = &pool{limit: poolBytes}
)

// fits reports whether c more bytes fit in the pool; a nil pool is
// unbounded (hinit's own stderr, and the tests of one queue's own bounds).
func (p *pool) fits(c int) bool { return p == nil || p.used.Load()+int64(c) <= p.limit }

// add counts c bytes (negative when released).
func (p *pool) add(c int) {
	if p != nil {
		p.used.Add(int64(c))
	}
}

// lineOverhead is what a queued line costs besides its text.
const lineOverhead = 64

// cost is what l counts against queueBytes.
func cost(l line) int { return len(l.text) + lineOverhead }

// rushBytes bounds the queue during a rush: room for what the pipe and the
// reader's buffer hold at an instance's end, past a full queue.
const rushBytes = 2 * queueBytes

// chunkBytes bounds what the writer writes between two reports of room
// made (release): an output's progress is seen at that grain.
const chunkBytes = 16 << 10

// stallWait is how long a full queue holds the reader (and through the
// pipe, the service) for its writer to make room. A writer that makes none
// in that time is stalled: pushes no longer wait for it (a line is queued
// when it fits, refused when not) until it has written everything it holds,
// so a slow or stalled output costs the service this much once per stall,
// not once per batch. A variable for tests only.
var stallWait = time.Second

// queue is the bounded queue between the reader and one output's writer.
// When it is full, push waits for the writer to make room, as long as the
// writer keeps making it: a burst faster than the output loses nothing, it
// holds the service back. Only a stalled writer (no room made for
// stallWait) makes push refuse lines; they are counted, and the count rides
// on the next line accepted, or is handed to the writer once it has taken
// every line (take) when none was. A rush (an instance's end, see
// Log.EndLine) lets lines past the bound at once, up to rushBytes; past
// that, push waits as it does without a rush: the pipe and the reader's
// buffer can hold far more than rushBytes of short lines at an exit, and
// they must not be lost to an output that moves. The second bound is
// there because rushes come with every exit, and an output stuck for good
// must not make them add up.
//
// A writer goroutine runs only while there is something to write: push and
// close say when one must be started, take says when it must end. So an idle
// service costs no writer goroutine, and at most one runs per output.
type queue struct {
	mu      sync.Mutex
	lines   []line        // waiting to be taken, guarded by mu
	size    int           // cost of the lines waiting or taken and not yet released, guarded by mu
	dropped uint64        // lines refused since the last accepted one, guarded by mu
	closed  bool          // no more pushes, guarded by mu
	busy    bool          // a writer is running, guarded by mu
	stalled bool          // the writer made no room for stallWait; cleared once it holds nothing; guarded by mu
	gaveUp  bool          // push never waits again (giveUp); guarded by mu
	rushes  int           // rushes not yet calmed: the bound is rushBytes while > 0; guarded by mu
	room    chan struct{} // made by a waiting push, closed by release or rush; guarded by mu
	pool    *pool         // shared with every other queue; nil in tests of one queue
}

// push queues l, waiting while the queue is full and its writer is not
// stalled, or reports ok == false when the line is refused. start says the
// caller must start a writer.
func (q *queue) push(l line) (ok, start bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := cost(l)
	if !q.fits(c) && !q.stalled && !q.gaveUp {
		q.waitRoom(c)
	}
	if !q.fits(c) {
		q.dropped++
		return false, false
	}
	l.dropped, q.dropped = q.dropped, 0
	q.lines = append(q.lines, l)
	q.size += c
	q.pool.add(c)
	return true, q.claim()
}

// fits reports whether a line of cost c may be queued now: within the
// queue's bound and, unless the queue holds nothing, within the pool's.
// q.mu is held.
func (q *queue) fits(c int) bool {
	return q.size+c <= q.bound() && (q.size == 0 || q.pool.fits(c))
}

// bound is what the queue may hold: queueBytes, rushBytes during a rush.
// q.mu is held.
func (q *queue) bound() int {
	if q.rushes > 0 {
		return rushBytes
	}
	return queueBytes
}

// waitRoom waits, with q.mu held and released while waiting, until c fits
// (a rush raises the bound, a release makes room in the queue and in the
// pool), the queue gives up, or stallWait has passed; then the writer is
// stalled. The queue holds lines, so a writer is running (busy) and will
// release.
func (q *queue) waitRoom(c int) {
	timer := time.NewTimer(stallWait)
	defer timer.Stop()
	for !q.fits(c) && !q.gaveUp {
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
			if !q.fits(c) {
				q.stalled = true
			}
			return
		}
	}
}

// wake ends the wait of a push. q.mu is held.
func (q *queue) wake() {
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
}

// release says the writer is done with lines of total cost c (written or
// lost): room for a waiting push. A writer that holds nothing any more is
// no longer stalled.
func (q *queue) release(c int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.size -= c
	q.pool.add(-c)
	if q.size == 0 {
		q.stalled = false
	}
	q.wake()
}

// giveUp makes push never wait for this queue's writer again: a line that
// does not fit is refused at once, and a push waiting now stops waiting.
func (q *queue) giveUp() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.gaveUp = true
	q.wake()
}

// rush makes push accept lines past the bound, at once, until the rush is
// calmed. Rushes count: each EndLine rushes once and is calmed once.
func (q *queue) rush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.rushes++
	q.wake()
}

// calm ends n rushes.
func (q *queue) calm(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.rushes -= n
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

// take returns every queued line; the writer releases them as it is done
// with them. With none left it returns the lines refused after the last
// one queued, for the writer to report now rather than with a line that
// may never come (the service has exited); then it either ends the writer
// (more == false, final == false: start again on the next push) or, when
// the queue is closed, tells it to finish the output (final == true).
func (q *queue) take() (batch []line, dropped uint64, more, final bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch, q.lines = q.lines, nil
	if len(batch) > 0 {
		return batch, 0, true, false
	}
	dropped, q.dropped = q.dropped, 0
	if q.closed {
		return nil, dropped, false, true
	}
	if dropped > 0 {
		return nil, dropped, true, false // the writer reports them and takes again
	}
	q.busy = false
	return nil, 0, false, false
}
