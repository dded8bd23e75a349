package keylock

import (
	"sync"
	"testing"
	"time"
)

// One holder per key; another key does not wait for it; the map is empty
// once nobody holds or waits.
func TestLock(t *testing.T) {
	var m Map
	unlockA := m.Lock("a")
	got := make(chan string, 2)
	go func() { u := m.Lock("a"); u(); got <- "a" }() // given back before it says so: Len below
	go func() { u := m.Lock("b"); u(); got <- "b" }()
	select {
	case k := <-got:
		if k != "b" {
			t.Fatalf("%s taken while a was held", k)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("b waited for a")
	}
	select {
	case k := <-got:
		t.Fatalf("%s taken while a was held", k)
	case <-time.After(20 * time.Millisecond):
	}
	unlockA()
	if k := <-got; k != "a" {
		t.Fatalf("got %s, want a", k)
	}
	var wg sync.WaitGroup
	var n int
	for range 100 {
		wg.Go(func() { u := m.Lock("c"); n++; u() })
	}
	wg.Wait()
	if n != 100 {
		t.Errorf("%d of 100 increments under the lock", n)
	}
	if l := m.Len(); l != 0 {
		t.Errorf("%d keys left in the map", l)
	}
}
