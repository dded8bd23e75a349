package supervise

import (
	"strings"
	"testing"
	"time"

	"hinit/config"
)

func TestRestartDelay(t *testing.T) {
	b := config.Backoff{Initial: 500 * time.Millisecond, Max: 4 * time.Second, ResetAfter: 10 * time.Second}
	tests := []struct {
		name     string
		ran      time.Duration
		failures int
		want     time.Duration
	}{
		{"long run restarts at once", 10 * time.Second, 3, 0},
		{"first quick failure waits initial", time.Second, 1, 500 * time.Millisecond},
		{"second doubles", time.Second, 2, time.Second},
		{"third doubles again", time.Second, 3, 2 * time.Second},
		{"fourth reaches max", time.Second, 4, 4 * time.Second},
		{"stays at max", time.Second, 40, 4 * time.Second},
		{"a failed start never ran", 0, 1, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := restartDelay(b, tt.ran, tt.failures); got != tt.want {
				t.Errorf("restartDelay(ran %v, failures %d) = %v, want %v", tt.ran, tt.failures, got, tt.want)
			}
		})
	}
}

// With reset_after: 0 a run still has to last backoff.initial to restart
// at once, and a start that fails (ran 0) is a quick failure: it used to
// be retried at once, some 1,700 times a second.
func TestResetAfterZero(t *testing.T) {
	b := config.Backoff{Initial: 500 * time.Millisecond, Max: 4 * time.Second}
	for _, tt := range []struct {
		ran  time.Duration
		want time.Duration
	}{{0, 500 * time.Millisecond}, {time.Millisecond, 500 * time.Millisecond}, {time.Second, 0}} {
		if got := restartDelay(b, tt.ran, 1); got != tt.want {
			t.Errorf("reset_after 0: restartDelay(ran %v) = %v, want %v", tt.ran, got, tt.want)
		}
	}
	f := newFixture(t)
	d := def("missing", "sleep", "inf")
	d.Command = []string{"/nonexistent/program"}
	d.Backoff = config.Backoff{Initial: 300 * time.Millisecond, Max: time.Second}
	s := f.add(d, true)
	st := waitState(t, s, StateBackoff)
	if !strings.Contains(st.Reason, "restarting in 300ms") {
		t.Errorf("after a failed start: %q, want a wait of backoff.initial", st.Reason)
	}
}

func TestGaveUp(t *testing.T) {
	g := config.GiveUp{Restarts: 3, Within: time.Minute}
	now := time.Unix(1000, 0)
	at := func(ago ...int) (ts []time.Time) {
		for _, a := range ago {
			ts = append(ts, now.Add(-time.Duration(a)*time.Second))
		}
		return ts
	}
	tests := []struct {
		name   string
		starts []time.Time
		want   bool
		kept   int
	}{
		{"under the limit", at(30, 20, 10), false, 3},
		{"over the limit", at(40, 30, 20, 10), true, 4},
		{"old restarts fall out of the window", at(90, 80, 20, 10), false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kept := gaveUp(g, tt.starts, now)
			if got != tt.want || len(kept) != tt.kept {
				t.Errorf("gaveUp = %v with %d kept, want %v with %d", got, len(kept), tt.want, tt.kept)
			}
		})
	}
	if got, _ := gaveUp(config.GiveUp{}, at(1, 1, 1, 1, 1), now); got {
		t.Error("give_up disabled but gave up")
	}
}
