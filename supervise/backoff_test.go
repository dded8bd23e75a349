package supervise

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
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

// A run that lasted reset_after ends a streak of quick failures however it
// ended: with a restart_now code (hermes' 75), by a restart signal (s6-svc
// -t, hermes gateway restart) or with a no_restart code. The next quick
// crash then waits backoff.initial, and FailingSince (what hsvc check's
// grace counts from) starts at that crash, not at the boot's streak. Before,
// only a long run ended by a plain restart reset them.
func TestLongRunEndsStreak(t *testing.T) {
	for _, how := range []string{"restart-now code", "restart signal", "no-restart code"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t)
			count := filepath.Join(t.TempDir(), "count")
			// Runs 1-4 crash at once; run 5 lasts 0.6 s and exits 75 or
			// 78, or waits for the restart signal; run 6 crashes.
			script := `n=$(cat ` + count + ` 2>/dev/null || echo 0); n=$((n+1)); echo $n >` + count + `
case $n in
1|2|3|4) exit 1 ;;
5) case $HOW in "restart-now code") sleep 0.6; exit 75 ;; "no-restart code") sleep 0.6; exit 78 ;; esac ;;
6) exit 1 ;;
esac
exec sleep 1000`
			d := def("svc", "sleep", "inf")
			d.Command = []string{"/bin/sh", "-c", script}
			d.Env = map[string]string{"HOW": how}
			d.RestartNowExitCodes = []int{75}
			d.NoRestartExitCodes = []int{0, 78}
			d.Backoff = config.Backoff{Initial: 20 * time.Millisecond, Max: 10 * time.Second, ResetAfter: 300 * time.Millisecond}
			s := f.add(d, true)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if how == "no-restart code" {
				st := waitState(t, s, StateExited)
				if st.LastExit == nil || st.LastExit.Code != 78 || st.FailingSince.Before(st.LastExit.At) {
					t.Errorf("after a 0.6 s run that exited 78: %+v; want FailingSince at that exit", st)
				}
				return
			}
			if how == "restart signal" {
				if st, err := s.WaitFor(ctx, func(st Status) bool { return st.State == StateUp && st.Restarts == 4 }); err != nil {
					t.Fatalf("run 5 not up: %v %+v", err, st)
				}
				time.Sleep(500 * time.Millisecond) // the length of run 5, past reset_after
				if err := s.SignalRestart(syscall.SIGTERM, true); err != nil {
					t.Fatal(err)
				}
			}
			st, err := s.WaitFor(ctx, func(st Status) bool { return st.LastExit != nil && st.Restarts == 6 })
			if err != nil {
				t.Fatalf("run 6 did not crash: %v %+v", err, st)
			}
			if st.State != StateBackoff || !strings.HasSuffix(st.Reason, "restarting in 20ms") {
				t.Errorf("the first quick crash after a long run: %s %q, want backoff.initial (20ms)", st.State, st.Reason)
			}
			if st.FailingSince.Before(st.LastExit.At) {
				t.Errorf("FailingSince %v, before the crash that began the new streak (%v)", st.FailingSince.Format(time.StampMilli), st.LastExit.At.Format(time.StampMilli))
			}
		})
	}
}
