package scandir

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// installS6 renames an s6 servicedir (run, a supervise/ skeleton with its
// control FIFO, a down file) into the scandir.
func installS6(t *testing.T, h *harness, name string) string {
	t.Helper()
	tmp := filepath.Join(h.dir, "."+name+".tmp")
	must(t, os.MkdirAll(filepath.Join(tmp, "supervise", "event"), 0o755))
	must(t, mkfifo(filepath.Join(tmp, "supervise", "control")))
	must(t, os.WriteFile(filepath.Join(tmp, "run"), []byte("#!/bin/sh\nexec sleep 1000\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(tmp, "notification-fd"), []byte("3\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(tmp, "down"), nil, 0o644))
	dir := filepath.Join(h.dir, name)
	must(t, os.Rename(tmp, dir))
	return dir
}

// With S6, a dir with an executable run and no service.yaml is reported
// with what it asks for; its removal is reported too.
func TestS6DirReported(t *testing.T) {
	h := start(t, "", 1000, func(w *Watcher) { w.S6 = true })
	dir := installS6(t, h, "gateway-coder")
	e := h.waitEntry("gateway-coder", func(*Entry) bool { return true })
	if e.S6 == nil || e.S6.NotificationFD != 3 || !e.Down || e.Err != nil || e.YAML != nil {
		t.Fatalf("entry = %+v (S6 %+v), want an s6 dir, down, notification-fd 3", e, e.S6)
	}
	if !e.Trust.Root && e.Trust.UID != os.Getuid() {
		t.Errorf("trust %+v, want the owner's", e.Trust)
	}
	must(t, os.RemoveAll(dir))
	h.waitGone("gateway-coder")
}

// Without S6 (no compat), the same dir is not a service.
func TestS6DirIgnoredWithoutCompat(t *testing.T) {
	h := start(t, "", 1000, nil)
	installS6(t, h, "plain")
	h.install("other", yamlA)
	h.waitEntry("other", func(*Entry) bool { return true })
	h.barrier()
	if e := h.entry("plain"); e != nil {
		t.Fatalf("s6 dir reported without S6: %+v", e)
	}
}

// An s6 dir's programs are executed by path through the scandir, so its
// owner can swap a root-owned dir for its own between the read and the
// start: in a scandir owned by a non-root uid, a root-owned s6 dir runs as
// that uid; in a root-owned 0755 scandir it keeps root's verdict.
func TestS6DirTrustFollowsScandirOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make root- and user-owned dirs")
	}
	for _, tc := range []struct {
		name string
		uid  int
	}{{"scandir of uid 10000", 10000}, {"root scandir 0755", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.Chmod(dir, 0o755))
			must(t, os.Chown(dir, tc.uid, tc.uid))
			h := start(t, dir, 1000, func(w *Watcher) { w.S6 = true })
			installS6(t, h, "svc")
			e := h.waitEntry("svc", func(*Entry) bool { return true })
			switch {
			case e.Err != nil || e.Trust.Refused != nil:
				t.Fatalf("entry err %v, trust %+v", e.Err, e.Trust)
			case tc.uid == 0 && !e.Trust.Root:
				t.Fatalf("trust %+v, want root", e.Trust)
			case tc.uid != 0 && (e.Trust.Root || e.Trust.UID != tc.uid || e.Trust.GID != tc.uid):
				t.Fatalf("trust %+v, want %d:%d", e.Trust, tc.uid, tc.uid)
			}
		})
	}
}

// With S6, a dir made the ordinary way (mkdir, write run, chmod +x) is
// reported at once, and so are later changes to its control files, with
// no rescan: the safety rescan is off here.
func TestS6DirMadeInPlace(t *testing.T) {
	h := start(t, "", 1000, func(w *Watcher) { w.S6 = true; w.SafetyRescan = 0 })
	dir := filepath.Join(h.dir, "svc")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\nexec sleep 1000\n"), 0o644))
	must(t, os.Chmod(filepath.Join(dir, "run"), 0o755))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && !e.S6.Finish })
	must(t, os.WriteFile(filepath.Join(dir, "finish"), []byte("#!/bin/sh\n"), 0o755))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && e.S6.Finish })
	must(t, os.WriteFile(filepath.Join(dir, "notification-fd"), []byte("3\n"), 0o644))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && e.S6.NotificationFD == 3 })
	must(t, os.WriteFile(filepath.Join(dir, "down-signal"), []byte("SIGHUP\n"), 0o644))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && e.S6.DownSignal != "" })
	must(t, os.WriteFile(filepath.Join(dir, "timeout-kill"), []byte("2500\n"), 0o644))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && e.S6.TimeoutKill == 2500*time.Millisecond })
	must(t, os.Mkdir(filepath.Join(dir, ".log.tmp"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, ".log.tmp", "run"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Rename(filepath.Join(dir, ".log.tmp"), filepath.Join(dir, "log")))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && e.S6.Log })
}

// With S6, a log/run written into a registered dir's existing log/ is seen
// at once (log/ has its own watch), and so is its removal.
func TestS6LogRunInPlace(t *testing.T) {
	h := start(t, "", 1000, func(w *Watcher) { w.S6 = true; w.SafetyRescan = 0 })
	dir := installS6(t, h, "svc")
	must(t, os.Mkdir(filepath.Join(dir, "log"), 0o755))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && !e.S6.Log })
	h.barrier()
	run := filepath.Join(dir, "log", "run")
	must(t, os.WriteFile(run, []byte("#!/bin/sh\nexec cat\n"), 0o644))
	must(t, os.Chmod(run, 0o755))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && e.S6.Log })
	must(t, os.RemoveAll(filepath.Join(dir, "log")))
	h.waitEntry("svc", func(e *Entry) bool { return e.S6 != nil && !e.S6.Log })
}
