package scandir

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A look that fails for want of a descriptor (EMFILE: the hermes user's
// services hold most of PID 1's) changes nothing: a running service is not
// reported gone, a new one is not reported broken, and both are read again
// within seconds once descriptors are free, not at the safety rescan. The
// open of the scandir itself failing read as "replaced": every name of
// the batch was reported gone, its service stopped.
func TestTransientReadRetried(t *testing.T) {
	h := start(t, "", 10, nil)
	h.install("a", "command: [sleep, '1']\n")
	h.waitEntry("a", func(*Entry) bool { return true })
	tmp := filepath.Join(h.dir, ".b.tmp")
	must(t, os.Mkdir(tmp, 0o755))
	must(t, os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte("command: [sleep, '2']\n"), 0o644))

	restore := exhaustDescriptors(t)
	// Renames need no descriptor: an event for a, and b's arrival.
	yaml := filepath.Join(h.dir, "a", "service.yaml")
	must(t, unix.Rename(yaml, yaml+".x"))
	must(t, unix.Rename(yaml+".x", yaml))
	must(t, unix.Rename(tmp, filepath.Join(h.dir, "b")))
	if !tryPoll(func() bool { return h.logs.count("cannot read now; trying again") > 0 }) {
		t.Error("no retry announced while descriptors were short")
	}
	restore()

	h.waitEntry("b", func(e *Entry) bool { return e.Err == nil })
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.history {
		if ev.Name == "a" && ev.Entry == nil || ev.Entry != nil && ev.Entry.Err != nil {
			t.Errorf("event while descriptors were short: %+v", ev)
		}
	}
	if e := h.state["a"].Entry; e == nil {
		t.Errorf("a is gone: %s", h.summary())
	}
}

// A rescan that cannot list the scandir for want of a descriptor lists it
// again within seconds: the names an inotify overflow lost are found only
// by a listing, and waited for the safety rescan (5 minutes) before.
func TestTransientListingRescanned(t *testing.T) {
	overflowWith(t, func(w *Watcher) { w.OverflowGap = 0 }, func(h *harness) {
		restore := exhaustDescriptors(t)
		go h.consume()
		if !tryPoll(func() bool { return h.logs.count("cannot list the scandir") > 0 }) {
			t.Errorf("no failed listing while descriptors were short; logs:\n%s", h.logs.String())
		}
		restore()
	})
}

// exhaustDescriptors lowers this process's descriptor limit to 0, so that
// every open fails with EMFILE until the returned func gives the limit
// back. The descriptors open stay usable, and one closed meanwhile frees
// no slot an open could take (a slot must be below the limit).
func exhaustDescriptors(t *testing.T) func() {
	t.Helper()
	var old syscall.Rlimit
	must(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old))
	low := old
	low.Cur = 0
	must(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	done := false
	give := func() {
		if done {
			return
		}
		done = true
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	}
	t.Cleanup(give)
	return give
}

// Without an inotify instance (inotify_init1 failing with EMFILE, as it
// does for every process of root once the host's fs.inotify.max_user_instances,
// 128 by default and shared by all its containers, is used up), the
// Watcher reads the scandir every PollEvery: a service there before and
// one added after are reported, a removed one goes. Before, Run returned
// the error at once and hinit supervised nothing of the scandir, not even
// the gateways its boot reconcile had just published. Once an instance can
// be had again, the Watcher takes it and stops polling.
func TestNoInotifyPolls(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "a"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "a", "service.yaml"), []byte("command: [sleep, '1']\n"), 0o644))
	restore := exhaustDescriptors(t) // inotify_init1 fails: EMFILE
	h := start(t, dir, 10, nil)
	restore()
	if !strings.Contains(h.logs.String(), "no inotify instance; reading the scandir every 1s until there is one") {
		t.Errorf("no warning about polling in the log:\n%s", h.logs.String())
	}
	h.waitEntry("a", func(*Entry) bool { return true })
	// Sync while polling: answered after the next rescan.
	h.install("c", "command: [sleep, '3']\n")
	if err := h.w.Sync(context.Background()); err != nil || h.entry("c") == nil {
		t.Errorf("Sync while polling: %v; c %+v", err, h.entry("c"))
	}
	if !tryPoll(func() bool { return h.logs.count("an inotify instance at last") > 0 }) {
		t.Errorf("still polling with descriptors free:\n%s", h.logs.String())
	}
	h.install("b", "command: [sleep, '2']\n")
	h.waitEntry("b", func(e *Entry) bool { return e.Err == nil })
	must(t, os.RemoveAll(filepath.Join(dir, "a")))
	h.waitGone("a")
}
