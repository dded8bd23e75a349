package reconcile

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/gwstate"
)

// The hermes user owns $HERMES_HOME/profiles and may put any number of
// entries there; PID 1 lists it at every boot. Only profiles are kept, the
// rest read a batch at a time: 60,000 entries of 250-byte names (no
// profile name has more than 64 bytes) cost PID 1 about 30 MiB of heap
// when the whole listing was held (Readdirnames(-1), then sorted).
func TestProfilesListingHeap(t *testing.T) {
	w := newWorld(t)
	profiles := filepath.Join(w.home, "profiles")
	mkdir(t, profiles)
	w.profile(t, "coder", "")
	pad := strings.Repeat("x", 244)
	for i := range 60000 {
		fd, err := unix.Open(filepath.Join(profiles, fmt.Sprintf("%s%06d", pad, i)), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
	}
	var list []profile
	var err error
	grew := heapGrowth(func() {
		list, _, err = listProfiles(gwstate.Home(w.home), "gateway", 0, slog.New(slog.DiscardHandler))
	}) >> 20
	if err != nil || len(list) != 2 || list[1].name != "coder" {
		t.Fatalf("listProfiles = %+v, %v; want default and coder", list, err)
	}
	if grew > 12 {
		t.Errorf("listing 60,000 entries that are no profile grew the heap by %d MiB, want at most 12", grew)
	}
}

// With more profiles than gateway slots (services_max, the root's slot
// included), the first by name get them, as the scandir fills its slots,
// whatever order the dir lists them in; the rest are skipped with one
// warning.
func TestProfilesListingMax(t *testing.T) {
	w := newWorld(t)
	for i := range 20 {
		w.profile(t, fmt.Sprintf("p%02d", 19-i), "")
	}
	var logs strings.Builder
	list, _, err := listProfiles(gwstate.Home(w.home), "gateway", 6, slog.New(slog.NewTextHandler(&logs, nil)))
	var got []string
	for _, p := range list {
		got = append(got, p.name)
	}
	if want := "default p00 p01 p02 p03 p04"; err != nil || strings.Join(got, " ") != want {
		t.Errorf("listProfiles with 6 slots = %v, %v; want %s", got, err, want)
	}
	if !strings.Contains(logs.String(), "reconcile: 15 more profiles skipped: no more than 6 gateway slots (services_max)") {
		t.Errorf("log %q, want one warning for the 15 left out", logs.String())
	}
}

// heapGrowth runs f and returns how far the heap grew above what it held
// before f at its peak while f ran (sampled every millisecond).
func heapGrowth(f func()) uint64 {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := base.HeapAlloc
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak - base.HeapAlloc
}

// Entries of profiles/ skipped (symlinks, bad names) get a warning each up
// to maxSkipWarnings, then one line for the rest: the hermes user may fill
// the dir with symlinks, and every boot printed a line for each.
func TestProfilesSkippedWarningsBounded(t *testing.T) {
	w := newWorld(t)
	w.profile(t, "ok", "")
	for i := range 25 {
		symlink(t, filepath.Join(w.outside, "profile"), filepath.Join(w.home, "profiles", fmt.Sprintf("link%02d", i)))
	}
	var logs strings.Builder
	list, links, err := listProfiles(gwstate.Home(w.home), "gateway", 0, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || len(list) != 2 || list[1].name != "ok" {
		t.Fatalf("listProfiles = %v, %v; want default and ok", list, err)
	}
	if len(links) != maxSkipWarnings {
		t.Errorf("links %q: %d, want the %d said", links, len(links), maxSkipWarnings)
	}
	if n := strings.Count(logs.String(), "reconcile: profile skipped"); n != maxSkipWarnings {
		t.Errorf("%d lines of their own, want %d:\n%s", n, maxSkipWarnings, logs.String())
	}
	if want := fmt.Sprintf("reconcile: %d more entries skipped (symlinks, bad names), not each said", 25-maxSkipWarnings); !strings.Contains(logs.String(), want) {
		t.Errorf("log %q, want %q", logs.String(), want)
	}
}
