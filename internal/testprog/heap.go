package testprog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// DeepChain makes dir and a chain of depth dirs named d under it
// (dir/d/d/d...), one level at a time relative to the one above, as the
// hermes user can make one deeper than any path: PID 1 must remove it
// without a descriptor per level.
func DeepChain(t testing.TB, dir string, depth int) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range depth {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			unix.Close(fd)
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
}

// LimitDescriptors lowers this process's descriptor limit to the
// descriptors open now plus room, until the returned func (also a
// cleanup of t) puts it back.
func LimitDescriptors(t testing.TB, room int) func() {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = uint64(len(ents) + room)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	done := false
	restore := func() {
		if !done {
			done = true
			syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
		}
	}
	t.Cleanup(restore)
	return restore
}

// FillDescriptors opens path (/dev/null, say) until the descriptor table
// is full (EMFILE) and returns the files, in the order of their opening,
// closed at the end of t (a file closed before is no matter).
func FillDescriptors(t testing.TB, path string) []*os.File {
	t.Helper()
	var fill []*os.File
	t.Cleanup(func() {
		for _, f := range fill {
			f.Close()
		}
	})
	for {
		f, err := os.Open(path)
		if errors.Is(err, syscall.EMFILE) {
			return fill
		}
		if err != nil {
			t.Fatal(err)
		}
		fill = append(fill, f)
	}
}
