package scandir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Entries that are no service dir are reported with why (issue 14 item 5),
// once per reason, and cleared when they go or become a real dir. A FIFO is
// never opened: the watcher would block on it.
func TestIgnoredEntriesAreReported(t *testing.T) {
	h := start(t, "", 1000, nil)
	target := t.TempDir()
	mkService(t, target, "real")
	must(t, os.Symlink(filepath.Join(target, "real"), filepath.Join(h.dir, "linked")))
	must(t, os.WriteFile(filepath.Join(h.dir, "plain"), []byte(yamlA), 0o644))
	must(t, mkfifo(filepath.Join(h.dir, "pipe")))
	mkService(t, h.dir, "Upper")
	want := map[string]string{
		"linked": "a symlink, never followed; rename a real dir into place",
		"plain":  "not a directory",
		"pipe":   "not a directory",
		"Upper":  "is not a valid service name",
	}
	for name, why := range want {
		h.waitFor(name+" ignored", func() bool { return strings.Contains(h.state[name].Ignored, why) })
	}
	h.barrier()
	h.mu.Lock()
	defer h.mu.Unlock()
	for name := range want {
		n := 0
		for _, ev := range h.history {
			if ev.Name == name {
				n++
			}
		}
		if n != 1 || h.state[name].Entry != nil {
			t.Errorf("%s: %d events, last %+v; want exactly one Ignored event", name, n, h.state[name])
		}
	}
}

// An ignored entry is cleared when it goes, and reported as a service once
// a real dir takes its name.
func TestIgnoredEntryCleared(t *testing.T) {
	h := start(t, "", 1000, nil)
	must(t, os.WriteFile(filepath.Join(h.dir, "plain"), []byte(yamlA), 0o644))
	must(t, os.Symlink(t.TempDir(), filepath.Join(h.dir, "linked")))
	h.waitFor("both ignored", func() bool { return h.state["plain"].Ignored != "" && h.state["linked"].Ignored != "" })

	must(t, os.Remove(filepath.Join(h.dir, "plain")))
	h.waitFor("plain cleared", func() bool { ev := h.state["plain"]; return ev.Ignored == "" && ev.Entry == nil })
	must(t, os.Remove(filepath.Join(h.dir, "linked")))
	mkService(t, h.dir, "linked")
	h.waitEntry("linked", func(*Entry) bool { return h.state["linked"].Ignored == "" })
}

// A service dir swapped for a symlink is removed as a service, then
// reported ignored, in that order.
func TestServiceReplacedBySymlinkIsIgnored(t *testing.T) {
	h := start(t, "", 1000, nil)
	h.install("svc", yamlA)
	h.waitEntry("svc", func(*Entry) bool { return true })
	must(t, os.RemoveAll(filepath.Join(h.dir, "svc")))
	must(t, os.Symlink(t.TempDir(), filepath.Join(h.dir, "svc")))
	h.waitFor("svc ignored", func() bool { return h.state["svc"].Ignored != "" && h.state["svc"].Entry == nil })
}

// At most max ignored names are reported; the others are counted in one
// log line, not one each.
func TestIgnoredNamesAreCapped(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"l1", "l2", "l3", "l4", "l5"} {
		must(t, os.Symlink("/", filepath.Join(dir, n)))
	}
	h := start(t, dir, 2, nil)
	h.mu.Lock()
	var reported []string
	for n, ev := range h.state {
		if ev.Ignored != "" {
			reported = append(reported, n)
		}
	}
	h.mu.Unlock()
	if len(reported) != 2 {
		t.Fatalf("reported %v, want 2 names", reported)
	}
	if got := h.logs.count("scandir: ignoring entry: a symlink"); got != 2 {
		t.Fatalf("%d per-name warnings, want 2:\n%s", got, h.logs)
	}
	if got := h.logs.count("3 more entries (refused, ignored or without a service.yaml) are neither watched nor listed"); got != 1 || h.logs.count("level=WARN") != 3 {
		t.Fatalf("summary logged %d times, want 1 and 3 warnings in all:\n%s", got, h.logs)
	}
	// Between rescans, the first name left out is logged, and no other.
	must(t, os.Symlink("/", filepath.Join(h.dir, "l6")))
	must(t, os.Symlink("/", filepath.Join(h.dir, "l7")))
	h.barrier()
	if got := h.logs.count("more than 2 entries are ignored"); got != 1 {
		t.Fatalf("%d lines for names left out between rescans, want 1:\n%s", got, h.logs)
	}
}

// Past services_max, at most minRefusedKept (here) refused dirs are
// reported, and no other costs PID 1 an inotify watch: 40 dirs with
// services_max 1 hold the scandir's watch, 1 accepted and 16 refused.
// Before, every dir kept a watch and a refusal (a user's 60,000 empty dirs
// cost 60,000 watches and 35 MB of PID 1).
func TestRefusedDirsAreCapped(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		d := filepath.Join(dir, fmt.Sprintf("s%02d", i))
		must(t, os.Mkdir(d, 0o755))
		must(t, os.WriteFile(filepath.Join(d, "service.yaml"), []byte("command: [x]\n"), 0o644))
	}
	h := start(t, dir, 1, nil)
	h.mu.Lock()
	refused := 0
	for _, ev := range h.state {
		if ev.Refused {
			refused++
		}
	}
	h.mu.Unlock()
	if refused != minRefusedKept {
		t.Errorf("%d refusals reported, want %d:\n%s", refused, minRefusedKept, h.summary())
	}
	if n := inotifyWatches(t); n != 1+1+minRefusedKept {
		t.Errorf("%d inotify watches, want %d (the scandir, 1 accepted, %d refused)", n, 2+minRefusedKept, minRefusedKept)
	}
	if got := h.logs.count("23 more entries (refused, ignored or without a service.yaml) are neither watched nor listed"); got != 1 {
		t.Errorf("summary logged %d times, want 1:\n%s", got, h.logs)
	}
}

// Dirs without a service.yaml yet are watched (to see one appear) up to
// services_max of them; the others hold no watch until a rescan. The
// watched ones still come up as soon as their service.yaml is written.
func TestPendingDirsAreCapped(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		must(t, os.Mkdir(filepath.Join(dir, fmt.Sprintf("p%02d", i)), 0o755))
	}
	h := start(t, dir, 2, nil)
	if n := inotifyWatches(t); n != 1+2 {
		t.Errorf("%d inotify watches, want 3 (the scandir and 2 dirs waiting for a service.yaml)", n)
	}
	if got := h.logs.count("38 more entries (refused, ignored or without a service.yaml)"); got != 1 {
		t.Errorf("summary logged %d times, want 1:\n%s", got, h.logs)
	}
	must(t, os.WriteFile(filepath.Join(dir, "p00", "service.yaml"), []byte("command: [x]\n"), 0o644))
	h.waitEntry("p00", func(*Entry) bool { return true })
}

// inotifyWatches counts the inotify watches this process holds.
func inotifyWatches(t *testing.T) int {
	fds, err := os.ReadDir("/proc/self/fdinfo")
	must(t, err)
	n := 0
	for _, fd := range fds {
		b, _ := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		n += strings.Count(string(b), "inotify wd:")
	}
	return n
}
