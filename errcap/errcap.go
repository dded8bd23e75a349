// Package errcap holds the one bound on the error text hinit keeps and
// sends (issue 14): an error is kept in memory for as long as the thing it
// describes, logged, and sent in every `hsvc status`, so text a hostile
// file can make long (64 KiB of unknown keys made a 1.9 MB message) is cut
// to Max bytes when it is made. A leaf without dependencies.
package errcap

import (
	"fmt"
	"unicode/utf8"
)

// Max is the longest error text kept or sent, in bytes (about a screen
// line's worth of problems; "... and N more" says what was left out).
const Max = 1024

// Text returns s cut to at most max bytes, at a rune boundary, ending in
// "… (N more bytes)" when it was cut. max below 32 is taken as 32.
func Text(s string, max int) string {
	max = maxOf(max, 32)
	if len(s) <= max {
		return s
	}
	cut := max - len(tail(len(s))) // the tail of the count cut is no longer
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + tail(len(s)-cut)
}

func tail(n int) string {
	return fmt.Sprintf("… (%d more bytes)", n)
}

func maxOf(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Error returns err when its text is at most Max bytes, and otherwise an
// error of its text cut to Max. The cut error keeps nothing of err but
// that text (releasing what err held is the point), so it no longer
// unwraps: errors.Is and errors.As see only the cut text.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if len(msg) <= Max {
		return err
	}
	return capped(Text(msg, Max))
}

// capped is an error cut to Max bytes.
type capped string

func (c capped) Error() string { return string(c) }
