package scandir

import (
	"context"
	"strconv"
	"testing"
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
	w.in = in
	if w.rootWd, err = in.add(dir, rootMask); err != nil {
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
