package control

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// lines are the lines written to out so far.
func lines(out *testprog.Buffer) []string {
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// TestQuietLog: a burst of one kind of warning is one line, then one line
// that counts the rest; another uid's warning is its own kind.
func TestQuietLog(t *testing.T) {
	var out testprog.Buffer
	q := newQuietLog(slog.New(slog.NewTextHandler(&out, nil)), 200*time.Millisecond)
	for range 10000 {
		q.Warn("control: refused", 10000)
	}
	q.Warn("control: refused", 10001)
	if got := lines(&out); len(got) != 2 || !strings.Contains(got[0], "uid=10000") || !strings.Contains(got[1], "uid=10001") {
		t.Fatalf("after the burst: %q", got)
	}
	testprog.WaitFor(t, 5*time.Second, "the summing-up line", func() bool { return len(lines(&out)) >= 3 })
	testprog.WaitFor(t, 5*time.Second, "the kinds to be forgotten", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.kinds) == 0
	})
	got := lines(&out)
	if len(got) != 3 || !strings.Contains(got[2], "uid=10000 repeated=9999 within=200ms") {
		t.Fatalf("lines: %q", got)
	}
}
