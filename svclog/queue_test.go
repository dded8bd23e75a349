package svclog

import (
	"testing"
)

// TestFullQueueWaitsForItsWriter: a push into a full queue returns once the
// writer releases, with the line queued; a writer that releases nothing for
// stallWait is stalled, and pushes are refused until it has released all it
// held; a rush lets a push past the bound at once.
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
	fill(fit)

	pushed := make(chan bool)
	go func() {
		ok, _ := q.push(l)
		pushed <- ok
	}()
	batch, _, _, _ := q.take()
	if len(batch) != fit {
		t.Fatalf("took %d lines, want %d", len(batch), fit)
	}
	select {
	case <-pushed:
		t.Fatal("a push returned while the queue was full: taken lines still count until released")
	default:
	}
	q.release(cost(l))
	if !<-pushed {
		t.Fatal("a push into a full queue was refused; want it to wait for the writer's release")
	}

	// The writer holds fit-1 taken lines and one queued: full. Nothing is
	// released for stallWait.
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
	if ok, _ := q.push(l); !ok {
		t.Fatal("push in a rush refused")
	}
	q.calm(1)
	rest, _, _, _ := q.take()
	q.release(q.size)
	if q.stalled {
		t.Fatal("still stalled once the writer holds nothing")
	}
	if len(rest) != 3 || rest[1].dropped != 2 || rest[2].dropped != 1 {
		t.Fatalf("took %d lines; want 3, the second and third carrying 2 and 1 refused", len(rest))
	}
	if ok, _ := q.push(l); !ok {
		t.Fatal("push after the writer caught up refused")
	}
}
