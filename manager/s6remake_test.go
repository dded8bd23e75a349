package manager_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/control"
	"hinit/internal/testprog"
	mt "hinit/manager/managertest"
)

// hermes' unregister (s6-svc -d, s6-svwait -D -t 10000, s6-svscanctl -an,
// rm -rf) returns while a gateway that drains longer is still stopping,
// and `hermes profile create` may then make the same dir again. Under s6
// the new dir is supervised at once, next to the old process ending. The
// new dir was never registered: the old dir's logger, NAME/log, draining
// the old service's output, still held the name ("cannot add service:
// service already exists"), and nothing read the dir again once it had
// gone (s6-svc -u: "supervisor not listening", for ever).
func TestS6DirMadeAgainWhileOldStops(t *testing.T) {
	f := mt.Start(t, "compat: s6-overlay\n", nil)
	tmpdir := t.TempDir()
	release, trapped := filepath.Join(tmpdir, "release"), filepath.Join(tmpdir, "trapped")
	if err := syscall.Mkfifo(release, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.Scandir, "gateway-coder")
	publish := func(run string) {
		tmp := filepath.Join(f.Scandir, ".gateway-coder.tmp")
		for p, content := range map[string]string{"run": run, "log/run": "#!/bin/sh\nexec cat >/dev/null\n"} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tmp, p), []byte(content), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(tmp, dir); err != nil {
			t.Fatal(err)
		}
	}
	// The old gateway drains until the test releases it.
	publish("#!/bin/sh\ntrap 'read x <" + release + "; exit 0' TERM\n: >" + trapped + "\nsleep 1000 &\nwait\n")
	logger := func() *control.Status { // NAME/log is no name a request may give
		for _, s := range f.Do(control.Request{Verb: control.VerbStatus}).Services {
			if s.Name == "gateway-coder/log" {
				return &s
			}
		}
		return nil
	}
	testprog.WaitFor(t, 10*time.Second, "gateway-coder (its trap set) and its logger up", func() bool {
		_, err := os.Stat(trapped)
		l := logger()
		return err == nil && f.State("gateway-coder") == "up" && l != nil && l.State == "up"
	})
	old, oldLog := f.Status("gateway-coder").PID, logger().PID

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 10*time.Second, "gateway-coder forgotten", func() bool { return f.Status("gateway-coder") == nil })
	if err := syscall.Kill(old, 0); err != nil {
		t.Fatalf("the old gateway is not draining: %v", err)
	}
	publish("#!/bin/sh\nexec sleep 1000\n")
	testprog.WaitFor(t, 10*time.Second, "the dir made again up while the old gateway drains", func() bool {
		st := f.Status("gateway-coder")
		return st != nil && st.State == "up" && st.PID != old
	})

	// The old gateway's trap reads it: opened once the trap has it open
	// (ENXIO before), never blocking the test if it is not there.
	testprog.WaitFor(t, 10*time.Second, "the old gateway's trap reading", func() bool {
		w, err := os.OpenFile(release, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false
		}
		w.Close()
		return true
	})
	testprog.WaitFor(t, 10*time.Second, "the old gateway and its logger gone", func() bool {
		return syscall.Kill(old, 0) == syscall.ESRCH && syscall.Kill(oldLog, 0) == syscall.ESRCH
	})
	if st := logger(); st == nil || st.State != "up" || st.PID == oldLog {
		t.Errorf("after the old logger ended, the new dir's logger is %+v, want up", st)
	}
	if st := f.Status("gateway-coder"); st == nil || st.State != "up" {
		t.Errorf("after the old gateway ended, the new one is %+v, want up", st)
	}
}

// An s6 dir replaced under its name by another dir in one step (a dir
// renamed over it with RENAME_EXCHANGE, then the old one removed; or a
// removal and a remake the watcher reads in one batch) is another dir:
// s6-svscan supervises dirs by device and inode, stops the old one's
// supervisor and starts the new dir's run. The scandir package says so too
// (Entry: "a dir removed and made again under the same name is another
// dir"). Here the old dir's process must not be what the name runs once
// the scandir is caught up with, and the new dir's run must have started.
func TestS6DirReplacedInOneStepIsANewService(t *testing.T) {
	f := mt.Start(t, "compat: s6-overlay\n", nil)
	scan := f.ScanNow()
	started := filepath.Join(t.TempDir(), "new-run-started")
	build := func(tmp, run string) {
		if err := os.Mkdir(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "run"), []byte(run), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(f.Scandir, "gateway-coder")
	build(filepath.Join(f.Scandir, ".old"), "#!/bin/sh\nexec sleep 1000\n")
	if err := os.Rename(filepath.Join(f.Scandir, ".old"), dir); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 10*time.Second, "the old dir's service up", func() bool { return f.State("gateway-coder") == "up" })
	old := f.Status("gateway-coder").PID

	// The new dir replaces the old one in one step; the old one is removed.
	tmp := filepath.Join(f.Scandir, ".gateway-coder.new")
	build(tmp, "#!/bin/sh\n: >"+started+"\nexec sleep 1000\n")
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("SKIPPED LOUDLY: RENAME_EXCHANGE: %v", err)
	}
	if err := os.RemoveAll(tmp); err != nil { // the old dir, now under the dot name
		t.Fatal(err)
	}
	if resp := f.Do(scan); !resp.OK { // s6-svscanctl -a
		t.Fatalf("scan now: %+v", resp)
	}
	s := f.Status("gateway-coder")
	if s == nil {
		t.Fatal("gateway-coder is no service after s6-svscanctl -a")
	}
	if s.PID == old {
		t.Errorf("gateway-coder still runs the removed dir's process %d (state %s, want %s): the new dir was taken for an edit of the old one", old, s.State, s.Want)
	}
	testprog.WaitFor(t, 10*time.Second, "the new dir's run started", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
}
