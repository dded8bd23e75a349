package asuser

import (
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

var tempSeq atomic.Uint64

// TempName returns a hidden name for a temporary file beside base, unique
// on this machine: the pid, a per-process counter and the clock. What makes
// a temporary file safe is how it is created (O_EXCL|O_NOFOLLOW, and a new
// name when that fails), not an unguessable name, so no random source (and
// no crypto package in PID 1) is needed.
func TempName(base string) string {
	return "." + base + "." + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tempSeq.Add(1), 10) +
		"-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
}
