package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// mono is CLOCK_MONOTONIC in nanoseconds, the clock the probe stamps with.
func mono() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// ms converts a nanosecond interval to milliseconds.
func ms(ns int64) float64 { return float64(ns) / 1e6 }

// msDur converts a duration to milliseconds.
func msDur(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
