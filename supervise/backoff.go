package supervise

import (
	"time"

	"hinit/config"
)

// restartDelay is how long to wait before the next start, given how long
// the last run lasted and how many quick failures came before it (including
// this one). A run of at least ResetAfter restarts at once.
func restartDelay(b config.Backoff, ran time.Duration, failures int) time.Duration {
	if ran >= b.ResetAfter || failures <= 0 {
		return 0
	}
	d := b.Initial
	for i := 1; i < failures && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
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
