package testprog

import (
	"testing"
	"time"
)

// WaitFor polls cond until it is true or d has passed, then fails the test
// with what. Tests use it instead of sleeps: it returns the moment the
// condition holds.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// WaitForCount polls count until it reaches want, and fails the test with
// what only when the count has not grown for stall: a slow machine (the
// race detector, CI's other packages beside it) takes longer, a stuck one
// still fails.
func WaitForCount(t testing.TB, stall time.Duration, what string, want int, count func() int) {
	t.Helper()
	last, since := -1, time.Now()
	for {
		n := count()
		if n >= want {
			return
		}
		if n > last {
			last, since = n, time.Now()
		} else if time.Since(since) > stall {
			t.Fatalf("waiting for %s: %d of %d, none more in %v", what, n, want, stall)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
