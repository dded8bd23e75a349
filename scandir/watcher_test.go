package scandir

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const yamlA = "command: [sleep, infinity]\n"

func TestRenameIntoPlaceIsReported(t *testing.T) {
	h := start(t, "", 1000, nil)
	h.install("gateway-coder", yamlA)
	e := h.waitEntry("gateway-coder", func(*Entry) bool { return true })
	if string(e.YAML) != yamlA || e.Err != nil || e.Down || e.UID != os.Getuid() {
		t.Fatalf("entry = %+v", e)
	}
	if e.Dir != filepath.Join(h.dir, "gateway-coder") {
		t.Fatalf("Dir = %q", e.Dir)
	}
}

func TestInitialScanReportsBeforeSynced(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b"} {
		must(t, os.Mkdir(filepath.Join(dir, n), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, n, "service.yaml"), []byte(yamlA), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(dir, "b", "down"), nil, 0o644))
	h := start(t, dir, 1000, nil) // returns once Synced arrived
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state["a"].Entry == nil || h.state["b"].Entry == nil || !h.state["b"].Entry.Down {
		t.Fatalf("before Synced: %v", h.state)
	}
}

// TestRenameLatency measures; it never fails on time (STYLE: timing stays out
// of pass/fail). Run with -v to see the number.
func TestRenameLatency(t *testing.T) {
	h := start(t, "", 1000, nil)
	var lat []time.Duration
	for i := range 200 {
		name := "svc-" + strconv.Itoa(i)
		tmp := filepath.Join(h.dir, "."+name+".tmp")
		must(t, os.Mkdir(tmp, 0o755))
		must(t, os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte(yamlA), 0o644))
		t0 := time.Now()
		must(t, os.Rename(tmp, filepath.Join(h.dir, name)))
		h.waitEntry(name, func(*Entry) bool { return true })
		h.mu.Lock()
		lat = append(lat, h.arrived[name].Sub(t0))
		h.mu.Unlock()
	}
	slices.Sort(lat)
	t.Logf("rename-into-place to Event: median %v, p90 %v, max %v over %d renames",
		lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1], len(lat))
}

func TestIgnoredEntries(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, dir string) string // returns the entry name
		warn string                                // expected warning, once; "" = silent
	}{
		{"dot dir being built", func(t *testing.T, dir string) string {
			mkService(t, dir, ".gateway-coder.tmp")
			return ".gateway-coder.tmp"
		}, ""},
		{"uppercase name", func(t *testing.T, dir string) string {
			mkService(t, dir, "Gateway")
			return "Gateway"
		}, "is not a valid service name"},
		{"name of 252 bytes", func(t *testing.T, dir string) string {
			n := strings.Repeat("a", 252)
			mkService(t, dir, n)
			return n
		}, "is not a valid service name"},
		{"symlink to a service dir", func(t *testing.T, dir string) string {
			target := t.TempDir()
			mkService(t, target, "real")
			must(t, os.Symlink(filepath.Join(target, "real"), filepath.Join(dir, "linked")))
			return "linked"
		}, "a symlink, never followed"},
		{"regular file", func(t *testing.T, dir string) string {
			must(t, os.WriteFile(filepath.Join(dir, "plain"), []byte(yamlA), 0o644))
			return "plain"
		}, "not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, "", 1000, nil)
			name := tc.make(t, h.dir)
			h.barrier()
			// Touch it again: a second event must not warn twice.
			must(t, unix.Lutimes(filepath.Join(h.dir, name), nil))
			h.barrier()
			if h.entry(name) != nil {
				t.Fatalf("%s was reported", name)
			}
			want := 0
			if tc.warn != "" {
				want = 1
			}
			if got := h.logs.count(tc.warn); tc.warn != "" && got != want {
				t.Fatalf("warning %q logged %d times, want %d; logs:\n%s", tc.warn, got, want, h.logs.String())
			}
			if tc.warn == "" && h.logs.count("level=WARN") != 0 {
				t.Fatalf("unexpected warning: %s", h.logs.String())
			}
		})
	}
}

func mkService(t testing.TB, dir, name string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "service.yaml"), []byte(yamlA), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRemoval(t *testing.T) {
	cases := []struct {
		name   string
		remove func(h *harness, path string)
	}{
		{"rm -r", func(h *harness, path string) { must(h.t, os.RemoveAll(path)) }},
		{"moved out of the scandir", func(h *harness, path string) {
			must(h.t, os.Rename(path, filepath.Join(h.t.TempDir(), "away")))
		}},
		{"renamed to a dot name", func(h *harness, path string) {
			must(h.t, os.Rename(path, filepath.Join(h.dir, ".trash")))
		}},
		{"service.yaml deleted", func(h *harness, path string) {
			must(h.t, os.Remove(filepath.Join(path, "service.yaml")))
		}},
		{"replaced by a symlink", func(h *harness, path string) {
			must(h.t, os.Rename(path, filepath.Join(h.dir, ".old")))
			must(h.t, os.Symlink(filepath.Join(h.dir, ".old"), path))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, "", 1000, nil)
			h.install("svc", yamlA)
			h.waitEntry("svc", func(*Entry) bool { return true })
			tc.remove(h, filepath.Join(h.dir, "svc"))
			h.waitGone("svc")
		})
	}
}

func TestRenameInsideScandirFollowsTheDir(t *testing.T) {
	h := start(t, "", 1000, nil)
	h.install("old", yamlA)
	h.waitEntry("old", func(*Entry) bool { return true })
	must(t, os.Rename(filepath.Join(h.dir, "old"), filepath.Join(h.dir, "new")))
	h.waitEntry("new", func(*Entry) bool { return true })
	h.waitGone("old")
	// The moved dir's own watch must now report under the new name.
	must(t, os.WriteFile(filepath.Join(h.dir, "new", "down"), nil, 0o644))
	h.waitEntry("new", func(e *Entry) bool { return e.Down })
}

func TestDownToggles(t *testing.T) {
	h := start(t, "", 1000, nil)
	h.install("svc", yamlA)
	h.waitEntry("svc", func(e *Entry) bool { return !e.Down })
	down := filepath.Join(h.dir, "svc", "down")
	for range 3 {
		must(t, os.WriteFile(down, nil, 0o644))
		h.waitEntry("svc", func(e *Entry) bool { return e.Down })
		must(t, os.Remove(down))
		h.waitEntry("svc", func(e *Entry) bool { return !e.Down })
	}
}

func TestServiceYAMLRewrite(t *testing.T) {
	cases := []struct {
		name  string
		write func(t *testing.T, dir string, b []byte)
	}{
		{"in place", func(t *testing.T, dir string, b []byte) {
			must(t, os.WriteFile(filepath.Join(dir, "service.yaml"), b, 0o644))
		}},
		{"atomic rename", func(t *testing.T, dir string, b []byte) {
			tmp := filepath.Join(dir, ".service.yaml.tmp")
			must(t, os.WriteFile(tmp, b, 0o644))
			must(t, os.Rename(tmp, filepath.Join(dir, "service.yaml")))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, "", 1000, nil)
			h.install("svc", yamlA)
			h.waitEntry("svc", func(*Entry) bool { return true })
			next := []byte("command: [hermes, gateway, run]\n")
			tc.write(t, filepath.Join(h.dir, "svc"), next)
			h.waitEntry("svc", func(e *Entry) bool { return bytes.Equal(e.YAML, next) })
		})
	}
}

// A writer that does mkdir, then writes service.yaml later, must not be
// reported until the file is there, and then with its whole content.
func TestMkdirThenWriteLater(t *testing.T) {
	h := start(t, "", 1000, nil)
	dir := filepath.Join(h.dir, "late")
	must(t, os.Mkdir(dir, 0o755))
	h.barrier()
	if h.entry("late") != nil {
		t.Fatal("dir without service.yaml was reported")
	}
	f, err := os.Create(filepath.Join(dir, "service.yaml"))
	must(t, err)
	_, err = f.WriteString(yamlA)
	must(t, err)
	h.barrier() // open, created, written, not closed yet
	if h.entry("late") != nil {
		t.Fatal("service.yaml reported before its writer closed it")
	}
	must(t, f.Close())
	h.waitEntry("late", func(*Entry) bool { return true })
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.history {
		if ev.Name == "late" && string(ev.Entry.YAML) != yamlA {
			t.Fatalf("reported a partial service.yaml: %q", ev.Entry.YAML)
		}
	}
}

func TestServiceYAMLProblemsAreReportedInEntry(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, path string)
		want error
	}{
		{"10 MB", func(t *testing.T, path string) {
			must(t, os.WriteFile(path, bytes.Repeat([]byte("#"), 10<<20), 0o644))
		}, ErrTooLarge},
		{"symlink", func(t *testing.T, path string) {
			must(t, os.WriteFile(path+".real", []byte(yamlA), 0o644))
			must(t, os.Symlink(path+".real", path))
		}, ErrNotRegular},
		{"fifo", func(t *testing.T, path string) {
			must(t, mkfifo(path))
		}, ErrNotRegular},
		{"directory", func(t *testing.T, path string) {
			must(t, os.Mkdir(path, 0o755))
		}, ErrNotRegular},
		{"another user's hard link", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			must(t, os.WriteFile(path+".other", []byte("key: sk-0123456789\n"), 0o600))
			must(t, os.Chown(path+".other", 4242, 4242))
			must(t, os.Link(path+".other", path))
		}, ErrLinked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			svc := filepath.Join(dir, "svc")
			must(t, os.Mkdir(svc, 0o755))
			tc.make(t, filepath.Join(svc, "service.yaml"))
			h := start(t, dir, 1000, nil)
			e := h.waitEntry("svc", func(*Entry) bool { return true })
			if !errors.Is(e.Err, tc.want) || e.YAML != nil {
				t.Fatalf("Err = %v, YAML %d bytes; want %v", e.Err, len(e.YAML), tc.want)
			}
		})
	}
}

// TestServiceYAMLLinkedByItsOwner: a service.yaml with other hard links
// that is its dir's owner's (an operator's definitions linked into a root
// scandir) is read; another user's is not (the case above).
func TestServiceYAMLLinkedByItsOwner(t *testing.T) {
	dir := t.TempDir()
	svc := filepath.Join(dir, "svc")
	must(t, os.Mkdir(svc, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "defs.yaml"), []byte(yamlA), 0o644))
	must(t, os.Link(filepath.Join(dir, "defs.yaml"), filepath.Join(svc, "service.yaml")))
	h := start(t, dir, 1000, nil)
	e := h.waitEntry("svc", func(*Entry) bool { return true })
	if e.Err != nil || string(e.YAML) != yamlA {
		t.Fatalf("Err = %v, YAML %q; want the linked definition read", e.Err, e.YAML)
	}
}

func TestOwnerIsReported(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown needs root")
	}
	h := start(t, "", 1000, nil)
	tmp := filepath.Join(h.dir, ".svc.tmp")
	must(t, os.Mkdir(tmp, 0o755))
	must(t, os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte(yamlA), 0o644))
	must(t, os.Chown(tmp, 10000, 10000))
	must(t, os.Rename(tmp, filepath.Join(h.dir, "svc")))
	e := h.waitEntry("svc", func(*Entry) bool { return true })
	if e.UID != 10000 || e.GID != 10000 {
		t.Fatalf("owner = %d:%d, want 10000:10000", e.UID, e.GID)
	}
	// A later chown is a change too (IN_ATTRIB on the scandir).
	must(t, os.Chown(filepath.Join(h.dir, "svc"), 0, 0))
	h.waitEntry("svc", func(e *Entry) bool { return e.UID == 0 })
}

func TestServicesMax(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b", "c", "d"} {
		mkService(t, dir, n)
	}
	h := start(t, dir, 2, nil)
	const refusedD = "scandir: refusing d: more than 2 services (services_max)"
	h.waitFor("d refused", func() bool { return h.state["d"].Refused })
	if h.entry("b") == nil || h.entry("c") == nil {
		t.Fatalf("first two names not accepted: %s", h.summary())
	}
	// A new name that sorts first is still refused: b and c keep their slots.
	h.install("a", yamlA)
	h.waitFor("a refused", func() bool { return h.state["a"].Refused })
	// Changing a refused service neither starts it nor logs again.
	must(t, os.WriteFile(filepath.Join(dir, "d", "down"), nil, 0o644))
	h.barrier() // barrier itself is refused too; it still orders events
	// Freeing a slot promotes the first waiting name in sorted order, with
	// its definition read again (the book keeps no YAML).
	must(t, os.RemoveAll(filepath.Join(dir, "c")))
	if e := h.waitEntry("a", func(*Entry) bool { return true }); string(e.YAML) != yamlA || e.dropped {
		t.Fatalf("a promoted with YAML %q (dropped %v), want %q", e.YAML, e.dropped, yamlA)
	}
	if h.entry("d") != nil {
		t.Fatalf("d promoted before a: %s", h.summary())
	}
	if n := h.logs.count(refusedD); n != 1 {
		t.Fatalf("refusal of d logged %d times, want 1:\n%s", n, h.logs.String())
	}
}

// TestOverflowRescanConverges forces a real IN_Q_OVERFLOW (overflowWith);
// the changes lost with it are found by the rescan.
func TestOverflowRescanConverges(t *testing.T) {
	overflowWith(t, func(w *Watcher) { w.OverflowGap = 0 }, nil)
}

// TestOverflowRescansAreSpaced: an overflow right after a rescan is
// rescanned only OverflowGap after it (the scandir's owner can overflow
// the queue at will, and each rescan reads every entry); the changes lost
// with it are found then.
func TestOverflowRescansAreSpaced(t *testing.T) {
	const gap = 5 * time.Second
	h, synced, flooded, converged := overflowWith(t, func(w *Watcher) { w.OverflowGap = gap }, nil)
	if flooded.Sub(synced) > gap/2 {
		t.Skipf("SKIPPED LOUDLY: the flood took %v, too close to the %v gap on this loaded machine", flooded.Sub(synced), gap)
	}
	if h.logs.count("rescanning soon") == 0 {
		t.Errorf("the overflow right after the first scan was rescanned at once; logs:\n%s", h.logs.String())
	}
	// The first scan ended after it sent Synced, and the test got it after.
	if d := converged.Sub(synced); d < gap/2 {
		t.Errorf("converged %v after the first scan, want the rescan put off by about %v", d, gap)
	}
}

// overflowWith forces a real IN_Q_OVERFLOW on a Watcher set up by setup:
// the consumer stops receiving, so the Watcher blocks on a send and stops
// reading, and the test queues far more events than
// fs.inotify.max_queued_events. Changes made while the queue is full are
// lost by the kernel; only a rescan finds them. resume, when not nil,
// starts the consumer again (go h.consume()) in its own way. It returns
// when the Watcher has converged, with the times the first scan's Synced
// was received, the flood was done and the convergence seen.
func overflowWith(t *testing.T, setup func(*Watcher), resume func(*harness)) (h *harness, synced, flooded, converged time.Time) {
	dir := t.TempDir()
	mkService(t, dir, "flood")
	mkService(t, dir, "keep")
	mkService(t, dir, "leave")
	h = newHarness(t, dir, 1000, setup)
	for ev := range h.out { // consume the first scan by hand
		h.record(ev)
		if ev.Synced {
			break
		}
	}
	synced = time.Now()
	h.install("blocker", yamlA) // the Watcher reads this, then blocks sending it
	poll(t, "blocker read", func() bool { return queued(t, h.w.in.fd) == 0 })
	limit := readInt(t, "/proc/sys/fs/inotify/max_queued_events")
	flood := filepath.Join(dir, "flood")
	// Each rename queues IN_MOVED_FROM and IN_MOVED_TO: 4×limit events
	// outrun the queue plus a last drain (17 reads of 64 KiB) the Watcher
	// may still have been doing when the flood began.
	a, b := filepath.Join(flood, "a"), filepath.Join(flood, "b")
	must(t, os.WriteFile(a, nil, 0o644))
	for range 2 * limit {
		must(t, os.Rename(a, b))
		a, b = b, a
	}
	// Lost in the overflow: only a rescan can see these.
	must(t, os.RemoveAll(filepath.Join(dir, "leave")))
	must(t, os.WriteFile(filepath.Join(dir, "keep", "down"), nil, 0o644))
	h.install("late", yamlA)
	flooded = time.Now()
	if resume != nil {
		resume(h)
	} else {
		go h.consume()
	}
	h.waitFor("convergence", func() bool {
		return h.state["blocker"].Entry != nil && h.state["late"].Entry != nil &&
			h.state["leave"].Entry == nil && h.state["keep"].Entry != nil && h.state["keep"].Entry.Down
	})
	converged = time.Now()
	if h.logs.count("inotify queue overflowed") == 0 {
		t.Fatalf("no overflow happened; logs:\n%s", h.logs.String())
	}
	return h, synced, flooded, converged
}

func TestScandirRemovedEndsRun(t *testing.T) {
	scandirRemovedEndsRun(t)
}

// scandirRemovedEndsRun checks that Run returns ErrScandirGone once its
// scandir is removed.
func scandirRemovedEndsRun(t *testing.T) {
	t.Helper()
	_, dir, done := runEmpty(t)
	must(t, os.Remove(dir))
	waitRunGone(t, done)
}

// runEmpty runs a Watcher on a new empty scandir until its first scan is
// done; done gets what Run returns.
func runEmpty(t *testing.T) (w *Watcher, dir string, done <-chan error) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "service")
	must(t, os.Mkdir(dir, 0o755))
	w = New(dir, 1000, discardLogger())
	out := make(chan Event, 8)
	ended := make(chan error, 1)
	go func() { ended <- w.Run(context.Background(), out) }()
	if ev := <-out; !ev.Synced {
		t.Fatalf("first event %+v, want Synced", ev)
	}
	return w, dir, ended
}

// waitRunGone waits for Run to return ErrScandirGone.
func waitRunGone(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, ErrScandirGone) {
			t.Fatalf("Run = %v, want ErrScandirGone", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its scandir was removed or moved")
	}
}

// A service.yaml hard-linked into place makes IN_CREATE only, which the
// Watcher skips (it waits for the writer's close); the safety rescan is what
// finds it.
func TestSafetyRescanFindsWhatEventsMiss(t *testing.T) {
	h := start(t, "", 1000, func(w *Watcher) { w.SafetyRescan = 20 * time.Millisecond })
	dir := filepath.Join(h.dir, "linked")
	must(t, os.Mkdir(dir, 0o755))
	h.barrier() // the mkdir is handled before the link exists
	src := filepath.Join(h.dir, ".src.yaml")
	must(t, os.WriteFile(src, []byte(yamlA), 0o644))
	must(t, os.Link(src, filepath.Join(dir, "service.yaml")))
	h.waitEntry("linked", func(*Entry) bool { return true })
}

func TestNoGoroutineLeakAfterCancel(t *testing.T) {
	cases := []struct {
		name  string
		until func(t *testing.T, dir string) // what Run is doing when ctx ends
	}{
		{"idle, waiting for events", func(*testing.T, string) {}},
		{"blocked sending to a consumer that left", func(t *testing.T, dir string) {
			mkService(t, dir, "pending")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			out := make(chan Event)
			done := make(chan error, 1)
			go func() { done <- New(dir, 1000, discardLogger()).Run(ctx, out) }()
			<-out // Synced
			tc.until(t, dir)
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run = %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
			if !tryPoll(func() bool { return runtime.NumGoroutine() <= before }) {
				buf := make([]byte, 1<<16)
				t.Fatalf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(),
					buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// An Entry says whether its dir is still the one it was read from: a
// consumer applying an event late (hinit's manager, after an unregister
// removed the dir) can tell. A dir swapped for one with the same content,
// even the same mtime (cp -a, then RENAME_EXCHANGE), is reported again, so
// a consumer that drops the stale event still hears of the new dir; as is
// a dir made again after a removal.
func TestEntryCurrent(t *testing.T) {
	h := start(t, "", 1000, nil)
	h.install("svc", yamlA)
	old := h.waitEntry("svc", func(*Entry) bool { return true })
	if !old.Current() {
		t.Fatalf("the entry just read is not current: %+v", old)
	}
	path, aside := filepath.Join(h.dir, "svc"), filepath.Join(h.dir, ".aside")
	must(t, os.Mkdir(aside, 0o755))
	must(t, os.WriteFile(filepath.Join(aside, "service.yaml"), []byte(yamlA), 0o644))
	must(t, os.Chtimes(filepath.Join(aside, "service.yaml"), old.ModTime, old.ModTime))
	must(t, unix.Renameat2(unix.AT_FDCWD, aside, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE))
	if old.Current() {
		t.Fatal("the entry of a dir swapped out is current")
	}
	swapped := h.waitEntry("svc", func(e *Entry) bool { return e.Current() })
	if string(swapped.YAML) != yamlA {
		t.Fatalf("the swapped-in dir: %+v", swapped)
	}
	// Removed, then made again: the old dir stays aside (.aside), so that
	// the new one cannot reuse its inode number, as ext4 would at once
	// (tmpfs never does).
	must(t, os.Rename(path, filepath.Join(h.dir, ".gone")))
	if swapped.Current() {
		t.Fatal("the entry of a removed dir is current")
	}
	h.install("svc", yamlA)
	h.waitEntry("svc", func(e *Entry) bool { return e.Current() })
}

// Sync returns once every change made before it has reached the consumer:
// a dir renamed into place, then Sync, and the consumer has it, each time,
// with nothing to wait for.
func TestSyncCatchesUp(t *testing.T) {
	h := start(t, "", 1000, nil)
	for i := range 100 {
		name := "s" + strconv.Itoa(i)
		h.install(name, yamlA)
		if err := h.w.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if h.entry(name) == nil {
			t.Fatalf("%s (round %d) not reported when Sync returned: %s", name, i, h.summary())
		}
	}
}

// OpenDir reaches the scandir by path, which its owner may replace (it
// may rename the scandir, even in a sticky /run): a FIFO there must not
// hold the opener until a writer comes (each hsvc unregister was a thread
// of PID 1 blocked for good), and a symlink, to a terminal say (PID 1's
// controlling terminal then), must not be followed. Both are another dir's
// place: ErrScandirGone, at once. The very dir, renamed back, opens again.
func TestOpenDirRefusesWhatReplacedTheScandir(t *testing.T) {
	w, dir, done := runEmpty(t)
	r, err := w.OpenDir()
	must(t, err)
	r.Close()
	moved := dir + ".old"
	must(t, os.Rename(dir, moved))
	waitRunGone(t, done) // the watcher stops; what it registered stays, and may be unregistered
	for _, plant := range []struct {
		what string
		make func() error
	}{
		{"a FIFO", func() error { return mkfifo(dir) }},
		{"a symlink to the scandir itself", func() error { return os.Symlink(moved, dir) }},
		{"a symlink to a terminal", func() error { return os.Symlink("/dev/tty", dir) }},
	} {
		must(t, plant.make())
		opened := make(chan error, 1)
		go func() {
			r, err := w.OpenDir()
			if err == nil {
				r.Close()
			}
			opened <- err
		}()
		select {
		case err := <-opened:
			if !errors.Is(err, ErrScandirGone) {
				t.Errorf("%s at the scandir's path: %v, want ErrScandirGone", plant.what, err)
			}
		case <-time.After(10 * time.Second):
			// Let the blocked open go, as a writer would.
			if fd, err := unix.Open(dir, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				unix.Close(fd)
			}
			t.Errorf("%s at the scandir's path: OpenDir still waits after 10s", plant.what)
			<-opened
		}
		must(t, os.Remove(dir))
	}
	must(t, os.Rename(moved, dir))
	r, err = w.OpenDir()
	if err != nil {
		t.Fatalf("the scandir renamed back: %v", err)
	}
	r.Close()
}

// s6-svscanctl -a promises that a dir made before the call is reported
// when it returns (hermes renames a gateway's dir in, calls it, then
// s6-svc -u). An overflow right after a rescan puts its own rescan off
// (OverflowGap); a Sync answered meanwhile must wait for that rescan,
// since the changes the overflow lost are only found by it.
func TestSyncWaitsForAPutOffOverflowRescan(t *testing.T) {
	const gap = 3 * time.Second
	var missing []string
	var took time.Duration
	overflowWith(t, func(w *Watcher) { w.OverflowGap = gap }, func(h *harness) {
		go h.consume()
		begun := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.w.Sync(ctx); err != nil {
			t.Fatalf("Sync: %v", err)
		}
		took = time.Since(begun)
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.state["late"].Entry == nil {
			missing = append(missing, "late (made before the Sync)")
		}
		if h.state["leave"].Entry != nil {
			missing = append(missing, "leave's removal (before the Sync)")
		}
		if e := h.state["keep"].Entry; e == nil || !e.Down {
			missing = append(missing, "keep/down (made before the Sync)")
		}
	})
	if len(missing) > 0 {
		t.Errorf("Sync returned after %v without %v: the overflow's rescan was still put off", took.Round(time.Millisecond), missing)
	}
}

// readQueued takes what inotify queued whatever the read deadline: a Sync
// sets a past one to wake the loop, and one that landed while the Sync's
// own read of the queue was under way made that read find nothing, so the
// Sync was answered before an overflow's marker was seen (a CI run of
// TestSyncWaitsForAPutOffOverflowRescan: "Sync returned after 1ms").
func TestReadQueuedIgnoresTheDeadline(t *testing.T) {
	in, err := openInotify()
	if err != nil {
		t.Fatal(err)
	}
	defer in.close()
	dir := t.TempDir()
	if _, err := in.add(dir, rootMask); err != nil {
		t.Fatal(err)
	}
	must(t, os.Mkdir(filepath.Join(dir, "svc"), 0o755))
	must(t, in.setDeadline(time.Unix(1, 0)))
	if evs := in.readQueued(nil); len(evs) != 1 || evs[0].name != "svc" {
		t.Fatalf("readQueued past its deadline: %+v, want the one event queued", evs)
	}
}
