package svclog

import (
	"testing"
	"time"

	"hinit/internal/testprog"
)

// TestFullQueueWaitsForItsWriter: a push into a full queue waits until the
// writer releases (taking is not enough: taken lines count until written),
// then queues its line; a writer that releases nothing for stallWait is
// stalled, and pushes stop waiting (a line that fits goes in, others are
// refused) until it has released all it held; a rush lets a push past the
// bound at once, up to rushBytes.
func TestFullQueueWaitsForItsWriter(t *testing.T) {
	q := new(queue)
	l := line{text: make([]byte, 1000)}
	fit := queueBytes / cost(l)
	fill := func(n int) {
		t.Helper()
		for i := range n {
			if ok, _ := q.push(l); !ok {
				t.Fatalf("line %d of %d refused", i+1, n)
			}
		}
	}
	waiting := func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.room != nil
	}
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = time.Hour // only release may end the wait
	fill(fit)

	pushed := make(chan bool, 1)
	go func() {
		ok, _ := q.push(l)
		pushed <- ok
	}()
	testprog.WaitFor(t, 10*time.Second, "the push to wait for room", waiting)
	if batch, _, _, _ := q.take(); len(batch) != fit {
		t.Fatalf("took %d lines, want %d", len(batch), fit)
	}
	if waiting() {
		select {
		case <-pushed:
			t.Fatal("a push returned while the queue was full")
		default:
		}
	} else {
		t.Fatal("take woke the waiting push: taken lines must count until released")
	}
	q.release(cost(l))
	select {
	case ok := <-pushed:
		if !ok {
			t.Fatal("a push into a full queue was refused; want it to wait for the writer's release")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the writer's release did not wake the waiting push")
	}

	// The writer holds fit-1 taken lines and one queued: full. Nothing is
	// released for stallWait.
	stallWait = 50 * time.Millisecond
	if ok, _ := q.push(l); ok || !q.stalled {
		t.Fatalf("push to a writer that released nothing for stallWait: ok %v, stalled %v; want refused, stalled", ok, q.stalled)
	}
	if ok, _ := q.push(l); ok {
		t.Fatal("push to a stalled writer accepted")
	}
	q.release(cost(l)) // moving again, but not caught up: a line that fits goes in
	if ok, _ := q.push(l); !ok || !q.stalled {
		t.Fatalf("push into room after a stall: ok %v, stalled %v; want accepted, still stalled", ok, q.stalled)
	}
	if ok, _ := q.push(l); ok { // full again: refused without a second wait
		t.Fatal("push into a full queue of a writer still catching up accepted")
	}
	q.rush()
	over := (rushBytes - q.size) / cost(l)
	fill(over)
	if ok, _ := q.push(l); ok || q.size > rushBytes {
		t.Fatalf("a rush took the queue to %d bytes; want refusals past %d", q.size, rushBytes)
	}
	q.calm(1)
	rest, _, _, _ := q.take()
	q.release(q.size)
	if q.stalled {
		t.Fatal("still stalled once the writer holds nothing")
	}
	if len(rest) != 2+over || rest[1].dropped != 2 || rest[2].dropped != 1 || rest[len(rest)-1].dropped != 0 {
		t.Fatalf("took %d lines; want %d, the second and third carrying 2 and 1 refused", len(rest), 2+over)
	}
	if ok, _ := q.push(l); !ok {
		t.Fatal("push after the writer caught up refused")
	}
	if batch, _, _, _ := q.take(); len(batch) != 1 || batch[0].dropped != 1 {
		t.Fatal("the line after the rush does not carry the one refused in it")
	}
}

// TestPoolBoundsEveryQueue: queues that share a pool take lines only while
// it has room, each past it by at most one line: a queue that holds
// nothing always takes one, so an output that keeps up is never starved by
// the others. A queue waiting on the pool is woken by its own writer's
// release, and is stalled, as when full, when that writer makes no room.
func TestPoolBoundsEveryQueue(t *testing.T) {
	defer func(d time.Duration) { stallWait = d }(stallWait)
	stallWait = 20 * time.Millisecond
	l := line{text: make([]byte, 1000)}
	c := cost(l)
	p := &pool{limit: 64 << 10} // well within one queue's own bound
	a, b := &queue{pool: p}, &queue{pool: p}
	fit := int(p.limit) / c
	for i := range fit {
		if ok, _ := a.push(l); !ok {
			t.Fatalf("line %d of %d refused within the pool", i+1, fit)
		}
	}
	if ok, _ := a.push(l); ok || !a.stalled {
		t.Fatalf("push past the pool into a queue whose writer released nothing: ok %v, stalled %v; want refused, stalled", ok, a.stalled)
	}
	if ok, _ := b.push(l); !ok {
		t.Fatal("an empty queue refused its first line while the pool is full; want one line always taken")
	}
	if ok, _ := b.push(l); ok {
		t.Fatal("a queue holding a line took another past the full pool")
	}
	if got, want := p.used.Load(), int64((fit+1)*c); got != want {
		t.Fatalf("pool holds %d bytes, want %d (a's %d lines and b's one)", got, want, fit)
	}

	// b's writer catches up (it was stalled, holding its one line): b
	// takes lines again, one past the still full pool, and waits for its
	// writer, not for a, to take the next.
	b.take()
	b.release(c)
	if b.stalled {
		t.Fatal("b still stalled once its writer holds nothing")
	}
	stallWait = time.Hour // only b's release may end the wait
	if ok, _ := b.push(l); !ok {
		t.Fatal("b refused a line while holding nothing")
	}
	pushed := make(chan bool, 1)
	go func() {
		ok, _ := b.push(l)
		pushed <- ok
	}()
	testprog.WaitFor(t, 10*time.Second, "b's push to wait for room in the pool", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.room != nil
	})
	b.take()
	b.release(c)
	select {
	case ok := <-pushed:
		if !ok {
			t.Fatal("b's waiting push refused after its writer released everything")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b's own release did not wake its push waiting on the pool")
	}
	batch, _, _, _ := a.take()
	a.release(len(batch) * c)
	if got := p.used.Load(); got != int64(c) {
		t.Fatalf("pool holds %d bytes once a's writer released everything, want %d (b's line)", got, c)
	}
}
