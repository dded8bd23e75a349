package signame

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, what it accepts is 1..64 and round-trips
// through Name; Name of every signal parses back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"TERM", "SIGTERM", "term", "15", "34", "64", "65", "0", "-1", "+15", "032",
		"SIGRTMIN", "RTMIN+3", "IOT", "POLL", "CLD", "SIG", "", "sig", "ſigterm", "SIGſegv", "ıNT", " 15", "15 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig, err := Parse(s)
		if err != nil {
			if sig != 0 {
				t.Fatalf("Parse(%q) = %d with error", s, sig)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if sig < 1 || sig > 64 {
			t.Fatalf("Parse(%q) = %d", s, sig)
		}
		n := Name(sig)
		back, err := Parse(n)
		if err != nil || back != sig {
			t.Fatalf("Parse(%q)=%d, Name=%q, Parse back=%d %v", s, sig, n, back, err)
		}
		for _, r := range s {
			if r >= 0x80 {
				t.Logf("Parse accepted non-ASCII %q as %s", s, n)
			}
		}
	})
}
