package reconcile

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// thousandProfiles fills w with 1000 named profiles (services_max), half
// running, half stopped, each with a stale gateway.pid.
func thousandProfiles(t testing.TB, w *world) {
	t.Helper()
	for i := range 1000 {
		state := `{"gateway_state":"running"}`
		if i%2 == 1 {
			state = `{"gateway_state":"stopped"}`
		}
		dir := w.profile(t, fmt.Sprintf("p%04d", i), state)
		writeFile(t, dir+"/gateway.pid", "1")
	}
}

// TestRunThousandProfiles checks Run at services_max and logs its time (not
// a pass/fail criterion; BenchmarkRunThousand measures properly).
func TestRunThousandProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("slow setup")
	}
	w := newWorld(t)
	thousandProfiles(t, w)
	start := time.Now()
	actions, err := w.run(t, false, "")
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for _, a := range actions {
		if a.Start {
			started++
		}
	}
	if len(actions) != 1001 || started != 500 {
		t.Errorf("%d actions, %d started; want 1001, 500", len(actions), started)
	}
	if n := len(entries(t, w.scan)); n != 1001 {
		t.Errorf("%d slots, want 1001", n)
	}
	t.Logf("Run over 1000 profiles (as hermes): %v", took)
}

// BenchmarkRunThousand: one boot with 1000 profiles, as hermes, laid out
// as in production: home on disk (TMPDIR), the scandir on a tmpfs when
// /dev/shm is one.
func BenchmarkRunThousand(b *testing.B) {
	w := newWorld(b)
	thousandProfiles(b, w)
	if shm, err := os.MkdirTemp("/dev/shm", "scan"); err == nil {
		defer os.RemoveAll(shm)
		w.scan = shm
	}
	for b.Loop() {
		b.StopTimer()
		os.RemoveAll(w.scan)
		mkdir(b, w.scan)
		b.StartTimer()
		if _, err := w.run(b, false, ""); err != nil {
			b.Fatal(err)
		}
	}
}
