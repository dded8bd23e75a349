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
