package testprog

import (
	"strconv"
	"strings"
)

// SigMask reads a signal mask line of /proc/PID/status text (field
// "SigIgn", "SigBlk"...): bit N-1 is signal N. ok is false when the line
// is missing or unreadable.
func SigMask(status, field string) (mask uint64, ok bool) {
	for _, l := range strings.Split(status, "\n") {
		if v, found := strings.CutPrefix(l, field+":\t"); found {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return m, err == nil
		}
	}
	return 0, false
}
