package svclog

import (
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"
)

// reasonQueueFull is the loss reason when an output could not keep up.
const reasonQueueFull = "queue full: output too slow"

// lineWriter is one destination of a Log's lines.
type lineWriter interface {
	// write writes the lines in order and returns how many were written
	// whole; err says why the rest were not.
	write(ls []line) (int, error)
	close()
}

// output feeds one lineWriter from its queue and accounts for lost lines.
type output struct {
	kind string // "file" or "console", for hinit's log
	q    *queue
	w    lineWriter
	log  *slog.Logger
	lost atomic.Uint64 // lines lost so far, for Lost
	done chan struct{} // closed when the output is finished

	// Owned by the running writer (one at a time, see queue): lines lost
	// since the last one written, and why.
	pending uint64
	reason  string
}

// newOutput makes an output whose queue draws on p (nil: its own bounds
// only).
func newOutput(kind string, w lineWriter, p *pool, log *slog.Logger) *output {
	return &output{kind: kind, q: &queue{pool: p}, w: w, log: log, done: make(chan struct{})}
}

// push hands a line to the output; it waits while the output is full but
// moving (see queue).
func (o *output) push(l line) {
	ok, start := o.q.push(l)
	if !ok {
		o.lost.Add(1)
	}
	if start {
		go o.write()
	}
}

// finish says no more lines will come; done is closed once the queued ones
// are written.
func (o *output) finish() {
	if o.q.close() {
		go o.write()
	}
}

// write writes queued lines until the queue is empty, then ends; on a
// closed queue it finishes the output.
func (o *output) write() {
	for {
		batch, dropped, more, final := o.q.take()
		for len(batch) > 0 {
			// Lines dropped before batch[0] are reported before it; room
			// is made after each chunk, so a push waiting on a slow
			// output sees it move.
			o.miss(batch[0].dropped, reasonQueueFull, false)
			k, c := 1, cost(batch[0])
			for k < len(batch) && batch[k].dropped == 0 && c+cost(batch[k]) <= chunkBytes {
				c += cost(batch[k])
				k++
			}
			o.put(batch[:k])
			o.q.release(c)
			batch = batch[k:]
		}
		if dropped > 0 || final {
			// Lines refused after the last one queued: no line may
			// follow them to carry their report.
			o.miss(dropped, reasonQueueFull, false)
			o.put(nil)
		}
		if final {
			if o.pending > 0 {
				// Not even their report could be written (a disk full
				// to the end): hinit's log has the count.
				o.log.Warn("log lines lost, and not reported in the log", "output", o.kind, "lost", o.pending, "reason", o.reason)
			}
			o.w.close()
			close(o.done)
			return
		}
		if !more {
			return
		}
	}
}

// put writes run, preceded by the report of the lines lost before it.
func (o *output) put(run []line) {
	report := o.pending > 0
	if report {
		var t time.Time // zero: now
		if len(run) > 0 {
			t = run[0].t
		}
		msg := "hinit: " + strconv.FormatUint(o.pending, 10) + " lines lost (" + o.reason + ")"
		run = append([]line{{t: t, text: []byte(msg)}}, run...)
	}
	if len(run) == 0 {
		return
	}
	n, err := o.w.write(run)
	if report {
		run = run[1:]
		if n > 0 {
			o.log.Info("log writing resumed", "output", o.kind, "lost", o.pending)
			o.pending, n = 0, n-1
		}
	}
	if err != nil {
		o.miss(uint64(len(run)-n), err.Error(), true)
	}
}

// miss records n lost lines; count is false for lines push already
// counted. The reason reported is the last error, or "queue full" when
// there was none: the error is the cause an operator can act on.
func (o *output) miss(n uint64, why string, count bool) {
	if n == 0 {
		return
	}
	if count {
		o.lost.Add(n)
	}
	if o.pending == 0 {
		o.log.Warn("log lines lost", "output", o.kind, "reason", why)
		o.reason = why
	} else if why != reasonQueueFull {
		o.reason = why
	}
	o.pending += n
}
