package svclog

import (
	"sync/atomic"
	"testing"
)

// TestFullQueueWaitsForItsWriter: a push into a full queue returns once the
// writer takes, with the line queued; a writer that takes nothing for
// stallWait is stalled, and pushes are refused until it takes again.
func TestFullQueueWaitsForItsWriter(t *testing.T) {
	q := new(queue)
	l := line{text: make([]byte, 1000)}
	fit := queueBytes / (len(l.text) + lineOverhead)
	for i := range fit {
		if ok, _ := q.push(l); !ok {
			t.Fatalf("line %d of %d refused", i+1, fit)
		}
	}

	var taken atomic.Bool
	pushed := make(chan bool)
	go func() {
		ok, _ := q.push(l)
		pushed <- ok && taken.Load()
	}()
	taken.Store(true)
	if batch, _, _, _ := q.take(); len(batch) != fit {
		t.Fatalf("took %d lines, want %d", len(batch), fit)
	}
	if !<-pushed {
		t.Fatal("a push into a full queue did not wait for the writer's take")
	}

	for range fit - 1 {
		q.push(l)
	}
	if ok, _ := q.push(l); ok || !q.stalled {
		t.Fatalf("push to a writer that took nothing for stallWait: ok %v, stalled %v; want refused, stalled", ok, q.stalled)
	}
	if ok, _ := q.push(l); ok {
		t.Fatal("push to a stalled writer accepted")
	}
	if batch, _, _, _ := q.take(); len(batch) != fit || q.stalled {
		t.Fatalf("take after the stall: %d lines, stalled %v; want %d lines and the stall over", len(batch), q.stalled, fit)
	}
	if ok, _ := q.push(l); !ok {
		t.Fatal("push after the writer took again refused")
	}
	if batch, _, _, _ := q.take(); len(batch) != 1 || batch[0].dropped != 2 {
		t.Fatalf("took %d lines, want 1 carrying the 2 refused", len(batch))
	}
}
