package hostile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// Trial: an s6 dir's run is executed by path (SCANDIR/NAME/run) after its
// verdict was taken, and the scandir is the hermes user's: hermes swaps a
// root-owned s6 dir with its own (renameat2 RENAME_EXCHANGE) over and over
// while root restarts the service. hermes's run must never run as root.
func TestS6DirSwap(t *testing.T) {
	p := startInit(t, "compat: s6-overlay\n")
	bin := p.exposeSelf()
	marker := filepath.Join(p.dir, "uids")
	tmp := filepath.Join(p.scan, ".svc")
	must(t, os.Mkdir(tmp, 0o755))
	must(t, os.WriteFile(filepath.Join(tmp, "run"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	must(t, os.Rename(tmp, filepath.Join(p.scan, "svc")))
	testprog.WaitFor(t, 10*time.Second, "svc registered", func() bool { _, ok := p.status("svc"); return ok })

	asHermes(t, `mkdir "$1" && printf '#!/bin/sh\nid -u >>%s\n' "$2" >"$1/run" && chmod 755 "$1/run"`,
		filepath.Join(p.scan, ".evil"), marker)
	swap := exec.Command(bin, filepath.Join(p.scan, "svc"), filepath.Join(p.scan, ".evil"), "20s")
	swap.Env = []string{"HOSTILE_AS=swap"}
	swap.SysProcAttr = hermesAttr()
	must(t, swap.Start())
	runs := func() []string { b, _ := os.ReadFile(marker); return strings.Fields(string(b)) }
	// Restart until hermes's run ran 5 times (or 15 s): every start
	// executes whichever dir is at svc at that moment.
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end) && len(runs()) < 5; {
		p.hsvc(nil, "restart", "svc")
	}
	swap.Process.Kill()
	swap.Wait()

	lines := runs()
	if len(lines) == 0 {
		t.Fatal("hermes's run never ran: the trial proves nothing")
	}
	for _, uid := range lines {
		if uid != "10000" {
			t.Fatalf("hermes's run ran as uid %s (%d runs: %q); want 10000 every time", uid, len(lines), lines)
		}
	}
}

// swapLoop is the hostile user's move: exchange the dirs a and b until d
// has passed (or it is killed).
func swapLoop(args []string) int {
	d, _ := time.ParseDuration(args[2])
	for end := time.Now().Add(d); time.Now().Before(end); {
		if err := unix.Renameat2(unix.AT_FDCWD, args[0], unix.AT_FDCWD, args[1], unix.RENAME_EXCHANGE); err != nil {
			fmt.Fprintln(os.Stderr, "renameat2:", err)
			return 1
		}
	}
	return 0
}
