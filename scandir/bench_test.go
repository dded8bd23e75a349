package scandir

import (
	"context"
	"strconv"
	"testing"

	"hinit/internal/testprog"
)

// BenchmarkRescan1000 is the cost of one safety rescan (or overflow recovery)
// of a scandir holding 1000 unchanged services: every dir re-read, no Event.
func BenchmarkRescan1000(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		mkService(b, dir, "gateway-"+strconv.Itoa(i))
	}
	w := New(dir, 1000, discardLogger())
	in, err := openInotify()
	if err != nil {
		b.Fatal(err)
	}
	defer in.close()
	if err := w.watchScandir(in); err != nil {
		b.Fatal(err)
	}
	out := make(chan Event, 1001)
	ctx := context.Background()
	w.rescan(ctx, out) // the first scan reports all 1000
	if len(out) != 1000 {
		b.Fatalf("first scan sent %d events, want 1000", len(out))
	}
	for b.Loop() {
		w.rescan(ctx, out)
	}
	if len(out) != 1000 {
		b.Fatalf("rescans of an unchanged scandir sent %d events", len(out)-1000)
	}
}

// TestRescanHoldsNoListing: a rescan of a scandir the hermes user filled
// with 50,000 entries of long names holds one batch of names, not the
// listing. Before, the first scan's heap peaked at about 30 MiB here (111
// MiB for 200,000), at each safety rescan and each queue overflow again.
func TestRescanHoldsNoListing(t *testing.T) {
	dir := t.TempDir()
	testprog.FillDir(t, dir, 50000)
	grew := testprog.HeapGrowth(func() {
		w := New(dir, 1000, discardLogger())
		out := make(chan Event, 16)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go w.Run(ctx, out)
		for ev := range out {
			if ev.Synced {
				break
			}
		}
	})
	if grew > 12<<20 {
		t.Fatalf("the scan's heap grew by %.1f MiB, want at most 12", float64(grew)/(1<<20))
	}
}
