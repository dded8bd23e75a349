package testprog

import (
	"strconv"
	"strings"
)

// StatusField is the value of field ("Uid", "SigBlk", "VmRSS"...) in
// /proc/PID/status text, its words joined by single spaces ("0 0 0 54321",
// "1028 kB"). ok is false when the line is missing.
func StatusField(status, field string) (value string, ok bool) {
	for _, l := range strings.Split(status, "\n") {
		if v, found := strings.CutPrefix(l, field+":"); found {
			return strings.Join(strings.Fields(v), " "), true
		}
	}
	return "", false
}

// SigMask reads a signal mask line of /proc/PID/status text (field
// "SigIgn", "SigBlk"...): bit N-1 is signal N. ok is false when the line
// is missing or unreadable.
func SigMask(status, field string) (mask uint64, ok bool) {
	v, ok := StatusField(status, field)
	if !ok {
		return 0, false
	}
	m, err := strconv.ParseUint(v, 16, 64)
	return m, err == nil
}
