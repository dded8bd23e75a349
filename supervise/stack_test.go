//go:build !race

package supervise

import (
	"fmt"
	"runtime"
	"testing"
)

// TestIdleServicesKeepSmallStacks holds the memory an idle service costs:
// its goroutine parked in loop and its log's reader each fit the 2 KB a
// goroutine starts with. A loop frame that grows past it (a sixth select
// case did) costs 2 KB more a service: 2 MB at 1000 services. Not under
// -race, whose frames are bigger.
func TestIdleServicesKeepSmallStacks(t *testing.T) {
	const n = 200
	f := newFixture(t)
	var before runtime.MemStats
	runtime.GC() // frees the stacks of goroutines that ended: earlier tests'
	runtime.ReadMemStats(&before)
	svcs := make([]*Service, n)
	for i := range svcs {
		svcs[i] = f.add(def(fmt.Sprintf("idle%d", i), "sleep", "inf"), true)
	}
	for _, s := range svcs {
		waitState(t, s, StateUp)
	}
	var after runtime.MemStats
	runtime.GC() // shrinks what can shrink; a parked loop over 1/4 of its stack cannot
	runtime.ReadMemStats(&after)
	per := (int64(after.StackInuse) - int64(before.StackInuse)) / n
	t.Logf("stack per idle service: %d bytes", per)
	if per > 5632 {
		t.Fatalf("stack per idle service: %d bytes, want at most 5.5 KiB (two 2 KiB goroutines, some slack)", per)
	}
}
