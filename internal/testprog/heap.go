package testprog

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FillDir makes n empty files of 246-byte names in dir: a dir the hermes
// user filled, for the tests that bound what a pass over it holds.
func FillDir(t testing.TB, dir string, n int) {
	t.Helper()
	long := strings.Repeat("n", 240)
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s%06d", long, i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// HeapGrowth runs f and returns how far the heap in use rose above where it
// was before f, at its highest, sampled every 2 ms while f runs: a
// measurement for tests that bound what a pass over a huge dir holds, not
// a synchronization.
func HeapGrowth(f func()) int64 {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak.Store(max(peak.Load(), ms.HeapInuse))
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-sampled
	return int64(peak.Load()) - int64(before.HeapInuse)
}
