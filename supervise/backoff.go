package supervise

import (
	"time"

	"hinit/config"
)

// restartDelay is how long to wait before the next start, given how long
// the last run lasted and how many quick failures came before it (including
// this one). A long run (ranLong) restarts at once.
func restartDelay(b config.Backoff, ran time.Duration, failures int) time.Duration {
	if ranLong(b, ran) || failures <= 0 {
		return 0
	}
	d := b.Initial
	for i := 1; i < failures && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// ranLong reports whether a run of length ran restarts at once and resets
// the failures: it lasted reset_after, and at least backoff.initial, so
// that reset_after: 0 cannot make a program that exits at once spin. A
// start that failed (ran 0) never ran.
func ranLong(b config.Backoff, ran time.Duration) bool {
	return ran > 0 && ran >= b.ResetAfter && ran >= b.Initial
}

// gaveUp reports whether the restarts recorded in starts (start times, oldest
// first) exceed the give_up limit within its window, as of now. It returns
// starts trimmed to the window.
func gaveUp(g config.GiveUp, starts []time.Time, now time.Time) (bool, []time.Time) {
	if g.Restarts <= 0 {
		return false, nil
	}
	i := 0
	for i < len(starts) && now.Sub(starts[i]) > g.Within {
		i++
	}
	starts = starts[i:]
	return len(starts) > g.Restarts, starts
}
