package capset

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Effective is the CapEff the kernel shows for the calling thread.
func TestEffectiveIsCapEff(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	got, err := Effective()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			want, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil || got != want {
				t.Fatalf("Effective() = %#x, CapEff %q (%v)", got, v, err)
			}
			return
		}
	}
	t.Fatal("no CapEff line in /proc/thread-self/status")
}
