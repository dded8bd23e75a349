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
