package supervise

import (
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := restartDelay(b, tt.ran, tt.failures); got != tt.want {
				t.Errorf("restartDelay(ran %v, failures %d) = %v, want %v", tt.ran, tt.failures, got, tt.want)
			}
		})
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
