package svclog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hinit/internal/hangfs"
	"hinit/internal/testprog"
)

// TestWriterStuckOnAHungVolumeTakesNoSignal: a log dir on a volume that
// stops answering (hangfs: FUSE, as NFS or a FUSE mount that hangs) holds
// the output's write(2) in the kernel. The thread it holds blocks every
// signal but the faults meanwhile: one the kernel gave it (SIGCHLD,
// SIGTERM) would wait there with it, and hinit would not hear of its
// children's deaths.
func TestWriterStuckOnAHungVolumeTakesNoSignal(t *testing.T) {
	h := hangfs.Mount(t)
	dir := filepath.Join(h.Dir, "logs", "svc")
	l, err := New(Options{Name: "svc", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		h.Release() // first: Close waits for the writer
		l.Close(context.Background())
	}()
	current := filepath.Join(h.Backing, "logs", "svc", "current")
	l.Writer().WriteString("before the hang\n")
	testprog.WaitFor(t, 10*time.Second, "the first line in "+current, func() bool {
		b, _ := os.ReadFile(current)
		return strings.Contains(string(b), "before the hang")
	})

	h.Hang()
	l.Writer().WriteString("while it hangs\n")
	var tid int
	select {
	case tid = <-h.Stuck():
	case <-time.After(10 * time.Second):
		t.Fatal("no write reached the hung volume within 10s")
	}
	hangfs.CheckQuiet(t, tid, "the log's write(2)")
}
