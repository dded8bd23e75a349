package scandir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inOwnUserNS runs the calling test again in a user namespace of its own
// (root mapped to our uid), where /proc/sys/user/max_inotify_* are that
// namespace's limits: the test may lower them without touching the
// host's. It reports true in the child, which runs the test; in the parent
// it reports the child's result and returns false. It skips when the
// kernel refuses the namespace.
func inOwnUserNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv("HINIT_TEST_USERNS") == t.Name() {
		b, err := os.ReadFile("/proc/self/uid_map")
		if err != nil || strings.Fields(string(b))[2] == "4294967295" {
			t.Fatalf("not in a user namespace of our own: uid_map %q, %v", b, err)
		}
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "HINIT_TEST_USERNS="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "fork/exec") {
		t.Skipf("no user namespace: %v", err)
	}
	if err == nil && strings.Contains(string(out), "--- SKIP: "+t.Name()) {
		t.Skipf("in a user namespace: %s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("in a user namespace: %v\n%s", err, out)
	}
	return false
}

// setLimit writes one of the namespace's /proc/sys/user limits, or skips
// the test where the kernel has none to write.
func setLimit(t *testing.T, name string, v int) {
	t.Helper()
	if err := os.WriteFile("/proc/sys/user/"+name, []byte(strconv.Itoa(v)+"\n"), 0); err != nil {
		t.Skipf("cannot set %s in a user namespace: %v", name, err)
	}
}

// A Watcher that polls for want of an inotify instance and then gets one
// but no watch for the scandir (fs.inotify.max_user_watches, per user as
// the instances are, used up on the host) goes on polling. Before, Run
// returned "inotify_add_watch ...: no space left on device": hinit picked
// up no dynamic service any more, what the polling fallback was made to
// prevent.
func TestPollWithoutWatchGoesOn(t *testing.T) {
	if !inOwnUserNS(t) {
		return
	}
	setLimit(t, "max_inotify_instances", 0)
	h := startWithA(t)
	setLimit(t, "max_inotify_watches", 0)
	setLimit(t, "max_inotify_instances", 128)
	if !tryPoll(func() bool { return h.logs.count("no watch for the scandir") > 0 }) {
		t.Fatalf("no instance taken, or Run ended; logs:\n%s", h.logs.String())
	}
	h.install("b", "command: [sleep, '2']\n")
	h.waitEntry("b", func(e *Entry) bool { return e.Err == nil })
	setLimit(t, "max_inotify_watches", 100000)
	watchesAgain(t, h)
}

// A Watcher that has an inotify instance from the start but no watch for
// the scandir polls, as one without an instance does, and stops once a
// watch can be had. Before, Run returned "no space left on device".
func TestNoWatchAtStartPolls(t *testing.T) {
	if !inOwnUserNS(t) {
		return
	}
	setLimit(t, "max_inotify_watches", 0)
	h := startWithA(t)
	h.install("b", "command: [sleep, '2']\n")
	h.waitEntry("b", func(e *Entry) bool { return e.Err == nil })
	setLimit(t, "max_inotify_watches", 100000)
	watchesAgain(t, h)
}

// A polling Watcher spends at most about a fifth of its time rescanning,
// however many names the scandir holds (the hermes user owns it and may
// fill it): its rescans are spaced by four times what the last one took,
// as an overflow's are. Before, it rescanned every PollEvery whatever a
// rescan cost: 200,000 empty files kept a core 36% busy (105% with -race),
// and a scandir whose rescan takes a second or more kept it busy for good.
func TestPollGap(t *testing.T) {
	w := New(t.TempDir(), 10, discardLogger())
	for cost, want := range map[time.Duration]time.Duration{0: PollEvery, 100 * time.Millisecond: PollEvery,
		time.Second: 4 * time.Second, 3 * time.Second: 12 * time.Second} {
		if w.scanCost = cost; w.pollGap() != want {
			t.Errorf("a rescan of %v: next one %v later, want %v", cost, w.pollGap(), want)
		}
	}
}

// A polling Watcher whose scandir is removed ends Run with ErrScandirGone,
// as the root watch's event ends it with inotify. Before, it rescanned the
// missing dir every second for good, with an error line each time.
func TestPollingScandirRemovedEndsRun(t *testing.T) {
	if !inOwnUserNS(t) {
		return
	}
	setLimit(t, "max_inotify_instances", 0)
	scandirRemovedEndsRun(t)
}

// startWithA starts a Watcher of a scandir that holds the service a, and
// waits until a is reported.
func startWithA(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "a"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "a", "service.yaml"), []byte("command: [sleep, '1']\n"), 0o644))
	h := start(t, dir, 10, nil)
	h.waitEntry("a", func(*Entry) bool { return true })
	return h
}

// watchesAgain checks that a polling Watcher takes an inotify instance and
// watch once it can, and reports a's removal then.
func watchesAgain(t *testing.T, h *harness) {
	t.Helper()
	if !tryPoll(func() bool { return h.logs.count("an inotify instance at last") > 0 }) {
		t.Errorf("still polling with watches free; logs:\n%s", h.logs.String())
	}
	must(t, os.RemoveAll(filepath.Join(h.dir, "a")))
	h.waitGone("a")
}
