package scandir

import (
	"os"
	"path/filepath"
	"testing"
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
