package manager_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hinit/config"
	"hinit/control"
	"hinit/gwstate"
	"hinit/internal/testprog"
	"hinit/manager"
	mt "hinit/manager/managertest"
	"hinit/scandir"
	"hinit/supervise"
)

func TestMain(m *testing.M) {
	mt.Main()
	os.Exit(m.Run())
}

var prog = mt.Prog

const testEnv = mt.Env

// gatewayConfig has a gateway template (gateways of profiles under
// $HERMES_HOME) and two static services, one of them protected.
func gatewayConfig() string {
	return `templates:
  gateway:
    command: ` + prog("sleep", "inf") + `
    ` + testEnv + `services:
  web:
    command: ` + prog("sleep", "inf") + `
    ` + testEnv + `  guarded:
    command: ` + prog("sleep", "inf") + `
    protected: true
    ` + testEnv
}

// A verb of one service given all and a name is a usage error: it never
// acts on a gateway instead of the service named.
func TestOneNameVerbsRefuseAll(t *testing.T) {
	f := mt.Start(t, gatewayConfig(), nil)
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder"}, 0, "")
	for _, verb := range []string{control.VerbSignal, control.VerbWait, control.VerbUnregister} {
		req := control.Request{Verb: verb, All: true, Names: []string{"web"}, Signal: "KILL", Until: control.UntilDown}
		f.Expect(req, control.CodeUsage, "exactly one service name, not all")
	}
	if st := f.State("gateway-coder"); st != "up" {
		t.Errorf("gateway-coder is %q after the refused requests, want up", st)
	}
}

// unregister without a wait answers at once, even for a service that
// ignores TERM; the service is forgotten at once and its dir removed once
// it has ended. With a wait, the answer comes when the wait runs out and
// the removal still happens, by SIGKILL at the stop timeout. No clock is
// read: "at once" is that stubborn, whose stop timeout is an hour, still
// runs when the answer comes; "when the wait runs out" is a timeout answer
// while bounded still runs, the kill at its stop timeout seconds away.
func TestUnregisterAnswersAtOnce(t *testing.T) {
	f := mt.Start(t, "", nil)
	def := "command: " + prog("ignore-term", "3") + "\nready: {notify_fd: 3}\n" + testEnv
	f.Publish("stubborn", def+"stop: {timeout: 1h}\n")
	f.Publish("bounded", def+"stop: {timeout: 3s}\n")
	pids := map[string]int{}
	for _, name := range []string{"stubborn", "bounded"} {
		f.Expect(control.Request{Verb: control.VerbWait, Names: []string{name}, Until: control.UntilReady, Wait: "10s"}, 0, "")
		if pids[name] = f.Status(name).PID; pids[name] <= 0 { // a kill(0) would reach the test itself
			t.Fatalf("%s is ready with no pid", name)
		}
	}
	running := func(name string) {
		t.Helper()
		if err := syscall.Kill(pids[name], 0); err != nil {
			t.Errorf("%s (pid %d) is gone when the answer comes: %v", name, pids[name], err)
		}
	}
	gone := func(name string) func() bool {
		return func() bool {
			_, err := os.Lstat(filepath.Join(f.Scandir, name))
			return os.IsNotExist(err) && f.Status(name) == nil
		}
	}

	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"stubborn"}}, 0, "")
	running("stubborn")
	f.Expect(control.Request{Verb: control.VerbStatus, Names: []string{"stubborn"}}, control.CodeNoService, "no such service")
	if _, err := os.Lstat(filepath.Join(f.Scandir, "stubborn")); err != nil {
		t.Errorf("stubborn's dir removed while it still runs: %v", err)
	}
	syscall.Kill(pids["stubborn"], syscall.SIGKILL)
	testprog.WaitFor(t, 10*time.Second, "stubborn's dir removed", gone("stubborn"))

	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"bounded"}, Wait: "200ms"},
		control.CodeTimeout, "timed out after 200ms waiting for bounded to stop")
	running("bounded")
	testprog.WaitFor(t, 10*time.Second, "bounded's dir removed", gone("bounded"))
}

// unregister with a wait long enough answers once the dir is gone.
func TestUnregisterWaits(t *testing.T) {
	f := mt.Start(t, "", nil)
	f.Publish("quick", "command: "+prog("sleep", "inf")+"\n"+testEnv)
	f.Expect(control.Request{Verb: control.VerbWait, Names: []string{"quick"}, Until: control.UntilUp, Wait: "10s"}, 0, "")
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"quick"}, Wait: "10s"}, 0, "")
	if _, err := os.Lstat(filepath.Join(f.Scandir, "quick")); !os.IsNotExist(err) {
		t.Errorf("dir still there after unregister --wait: %v", err)
	}
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"web"}}, control.CodeNoService, "no such service: web")
}

// An event the scandir watcher read before an unregister removed the dir,
// applied once the unregister is over (events wait in a channel), does not
// start the service again; nor when the dir could not be removed and is
// still there, until it is gone. In a container, hermes profile delete
// found a new gateway, and its planned-stop marker, being written into the
// profile dir it was removing ("directory not empty").
func TestStaleEventAfterUnregister(t *testing.T) {
	for _, removal := range []string{"done", "failed"} {
		t.Run(removal, func(t *testing.T) {
			f := mt.Start(t, "", nil)
			f.Publish("svc", "command: "+prog("sleep", "inf")+"\n"+testEnv)
			// A second watcher of the same scandir reads the dir as the
			// manager's did; its event is held until the unregister is over.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			events := make(chan scandir.Event, 16)
			go scandir.New(f.Scandir, 100, slog.New(slog.DiscardHandler)).Run(ctx, events)
			var held scandir.Event
			for held.Entry == nil {
				select {
				case ev := <-events:
					if ev.Name == "svc" {
						held = ev
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the second watcher did not report svc")
				}
			}
			req := control.Request{Verb: control.VerbUnregister, Names: []string{"svc"}, Wait: "10s"}
			if removal == "failed" {
				restore := manager.FailRemovals(errors.New("injected failure"))
				f.Expect(req, control.CodeFailed, "injected failure")
				restore()
			} else {
				f.Expect(req, 0, "")
			}
			manager.ApplyEvent(f.M, held)
			if st := f.Status("svc"); st != nil && (st.PID != 0 || st.Want == "up") {
				t.Fatalf("svc is back after its unregister: %+v", *st)
			}
			if removal == "failed" {
				if st := f.Status("svc"); st == nil || !strings.Contains(st.Reason, "unregistered, but its dir is left") || !strings.HasSuffix(st.Reason, ": injected failure") {
					t.Errorf("status of the dir left behind: %+v", st)
				}
				// Unregistered again, the dir goes, and so does the name.
				f.Expect(req, 0, "")
				testprog.WaitFor(t, 5*time.Second, "svc forgotten", func() bool { return f.Status("svc") == nil })
			}
		})
	}
}

// A register past services_max fails at once and leaves nothing behind.
// Before, its dir was published and refused, and it stayed: the failed
// register started the service once a slot freed. When hinit cannot tell
// the scandir is full (here a dir whose definition does not render holds
// the slot), the watcher's refusal is the answer, at once, not after
// QuickAnswer with "did not pick up", and the refused dir is removed; an
// old note of the name, from before the publish, is no answer.
func TestRegisterRefusedAnswersAtOnce(t *testing.T) {
	f := mt.Start(t, "services_max: 1\ntemplates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv, nil)
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "a", Down: true}, 0, "")
	began := time.Now()
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "b", Down: true},
		control.CodeFailed, "gateway-b is not registered: 1 dynamic services already (services_max 1); hsvc unregister one first")
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("a refused register took %v", took)
	}
	if _, err := os.Lstat(filepath.Join(f.Scandir, "gateway-b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused register left its dir: %v", err)
	}
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"gateway-a"}, Wait: "10s"}, 0, "")
	testprog.WaitFor(t, 5*time.Second, "gateway-a forgotten", func() bool { return f.Status("gateway-a") == nil })

	f.Publish("broken", "command: [x]\nrestart: sometimes\n")
	testprog.WaitFor(t, 5*time.Second, "broken noted", func() bool { return f.Status("broken") != nil })
	began = time.Now()
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "b"},
		control.CodeFailed, "gateway-b is not registered: refused: more than 1 services (services_max)")
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("a register refused by the watcher took %v", took)
	}
	if _, err := os.Lstat(filepath.Join(f.Scandir, "gateway-b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused register left its dir: %v", err)
	}
	testprog.WaitFor(t, 5*time.Second, "gateway-b's dir forgotten", func() bool { return f.Status("gateway-b") == nil })
	// Room again: nothing takes it, and the same register works.
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"broken"}}, 0, "")
	testprog.WaitFor(t, 5*time.Second, "broken's dir forgotten", func() bool { return f.Status("broken") == nil })
	if st := f.Status("gateway-b"); st != nil {
		t.Errorf("the refused gateway-b is %+v once a slot is free", st)
	}
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "b", Down: true}, 0, "")
}

// A register answered before the watcher has read its dir (a scandir busy
// with many large definitions, as in TestJunkDefinitions) says that the dir
// is published, and what it leaves is settled once the watcher reads it:
// the gateway started is recorded "running", a dir refused is removed, as
// when the register still waited. Before, it answered "did not pick up"
// and did neither: the next boot undid the gateway this one ran, and the
// refused dir stayed, to start once a slot freed.
func TestRegisterSettledAfterItsAnswer(t *testing.T) {
	defer manager.ShortenRegisterWait(200 * time.Millisecond)()
	published := func(t *testing.T, f *mt.Fixture, instance string) {
		t.Helper()
		resp := f.Do(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: instance})
		if resp.Code != control.CodeTimeout || !strings.Contains(resp.Error, "its dir is published") {
			t.Errorf("register answered %d %q, want %d: published, not read yet", resp.Code, resp.Error, control.CodeTimeout)
		}
		if st := f.Status("gateway-" + instance); st != nil {
			t.Fatalf("gateway-%s is %+v while the watcher is held; the test proves nothing", instance, *st)
		}
	}
	t.Run("recorded", func(t *testing.T) {
		f, state := coderGateway(t)
		if err := os.WriteFile(state, []byte(`{"desired_state":"stopped"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		release, restore := manager.HoldEvents("gateway-coder")
		defer restore()
		published(t, f, "coder")
		release()
		testprog.WaitFor(t, 10*time.Second, "gateway-coder up and recorded running", func() bool {
			return f.State("gateway-coder") == "up" && desiredState(state) == "running"
		})
	})
	t.Run("removed", func(t *testing.T) {
		// Removed before the watcher read it: it will never be a
		// service, and the register's wait ends (it waited for as long
		// as hinit ran), saying so in the log.
		f, _ := coderGateway(t)
		release, restore := manager.HoldEvents("gateway-coder")
		defer restore()
		published(t, f, "coder")
		if err := os.RemoveAll(filepath.Join(f.Scandir, "gateway-coder")); err != nil {
			t.Fatal(err)
		}
		release()
		testprog.WaitFor(t, 10*time.Second, "the register's end logged", func() bool {
			return strings.Contains(f.Logged.String(), "gateway-coder is not registered: its dir was removed or replaced meanwhile")
		})
	})
	t.Run("refused", func(t *testing.T) {
		// A dir whose definition does not render holds the one slot:
		// register cannot tell, and the watcher refuses its dir.
		f := mt.Start(t, "services_max: 1\ntemplates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv, nil)
		f.Publish("broken", "command: [x]\nrestart: sometimes\n")
		release, restore := manager.HoldEvents("gateway-b")
		defer restore()
		published(t, f, "b")
		release()
		testprog.WaitFor(t, 10*time.Second, "gateway-b's refused dir removed and forgotten", func() bool {
			_, err := os.Lstat(filepath.Join(f.Scandir, "gateway-b"))
			return errors.Is(err, os.ErrNotExist) && f.Status("gateway-b") == nil
		})
	})
}

// A register answered before the watcher read its dir holds a slot until
// it is read: the registers a user leaves waiting (each a goroutine of
// PID 1's, for as long as hinit runs when the watcher never reports the
// dir) stay within services_max. Here the watcher reports nothing: its
// refused list is full (refusedMax), so the dir is refused unlisted.
func TestRegisterWaitingHoldsASlot(t *testing.T) {
	defer manager.ShortenRegisterWait(300 * time.Millisecond)()
	f := mt.Start(t, "services_max: 1\ntemplates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv, nil)
	f.Publish("broken", "command: [x]\nrestart: sometimes\n")
	testprog.WaitFor(t, 5*time.Second, "broken noted", func() bool { return f.Status("broken") != nil })
	for i := range 16 {
		f.Publish(fmt.Sprintf("junk%02d", i), "command: [x]\n")
	}
	testprog.WaitFor(t, 5*time.Second, "junk refused", func() bool { return f.Status("junk15") != nil })
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "b00"}, control.CodeTimeout, "its dir is published")
	for i := 1; i < 4; i++ {
		resp := f.Do(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: fmt.Sprintf("b%02d", i)})
		if resp.Code != control.CodeFailed || !strings.Contains(resp.Error, "services_max") {
			t.Errorf("register b%02d with gateway-b00 still waiting: %d %q, want %d: services_max", i, resp.Code, resp.Error, control.CodeFailed)
		}
	}
}

// A register of a name still being unregistered (its process stopping,
// its dir not yet removed, or removed with the unregister not over) says
// so at once. Before, the first was "file exists" from the publish, and in
// the second the new dir's event was dropped as the old one's: register
// timed out and the dir was never supervised. Once the unregister is over,
// the same register works.
func TestRegisterWhileUnregistering(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(map[bool]string{false: "dir still there", true: "dir removed"}[after], func(t *testing.T) {
			f := mt.Start(t, "templates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv, nil)
			reg := control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "a"}
			f.Expect(reg, 0, "")
			release, restore := manager.HoldRemovals(after)
			defer restore()
			f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"gateway-a"}}, 0, "")
			dir := filepath.Join(f.Scandir, "gateway-a")
			if after {
				testprog.WaitFor(t, 5*time.Second, "gateway-a's dir removed", func() bool {
					_, err := os.Lstat(dir)
					return errors.Is(err, os.ErrNotExist)
				})
			}
			began := time.Now()
			f.Expect(reg, control.CodeFailed, "gateway-a is still being unregistered")
			if took := time.Since(began); took > 2*time.Second {
				t.Errorf("the refused register took %v", took)
			}
			// What the refusal advises waits for the unregister under way,
			// and so does wait --down (both answered "no such service").
			gw := []string{"gateway-a"}
			f.Expect(control.Request{Verb: control.VerbUnregister, Names: gw}, 0, "")
			f.Expect(control.Request{Verb: control.VerbUnregister, Names: gw, Wait: "200ms"}, control.CodeTimeout, "it is being unregistered")
			f.Expect(control.Request{Verb: control.VerbWait, Names: gw, Until: control.UntilDown, Wait: "200ms"}, control.CodeTimeout, "it is being unregistered")
			waits, restoreCount := manager.CountLeaveWaits()
			defer restoreCount()
			answers := make(chan *control.Response, 2)
			go func() { answers <- f.Do(control.Request{Verb: control.VerbUnregister, Names: gw, Wait: "10s"}) }()
			go func() { answers <- f.Do(control.Request{Verb: control.VerbWait, Names: gw, Until: control.UntilDown}) }()
			testprog.WaitFor(t, 5*time.Second, "both waits under way", func() bool { return waits("gateway-a") == 2 })
			release()
			for range 2 {
				if resp := <-answers; !resp.OK {
					t.Errorf("a wait for the unregister under way: %+v", resp)
				}
			}
			testprog.WaitFor(t, 5*time.Second, "the unregister over", func() bool { return !manager.Leaving(f.M, "gateway-a") })
			f.Expect(reg, 0, "")
			if st := f.State("gateway-a"); st != "up" && st != "starting" {
				t.Errorf("gateway-a is %q after its new register", st)
			}
		})
	}
}

// A dir made again under an unregistered name right after the old one is
// removed, before the unregister is over, is supervised once it is: hermes
// may write a profile's dir itself right after hsvc unregister answered.
// Before, the new dir's event was dropped as the old one's, and since the
// watcher had sent it, no rescan sent it again: it was never supervised.
func TestDirMadeAgainWhileUnregistering(t *testing.T) {
	f := mt.Start(t, "templates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv, nil)
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "a"}, 0, "")
	release, restore := manager.HoldRemovals(true) // removed, the unregister not over
	defer restore()
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"gateway-a"}}, 0, "")
	dir := filepath.Join(f.Scandir, "gateway-a")
	testprog.WaitFor(t, 5*time.Second, "gateway-a's dir removed", func() bool {
		_, err := os.Lstat(dir)
		return errors.Is(err, os.ErrNotExist)
	})
	tmp := filepath.Join(f.Scandir, ".gateway-a.tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte("template: gateway\ninstance: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	// Events are applied in order: once a dir made after it is shown,
	// gateway-a's event has been applied while its unregister was not over.
	f.Publish("later", "command: "+prog("sleep", "inf")+"\n"+testEnv)
	if !manager.Leaving(f.M, "gateway-a") {
		t.Fatal("the unregister ended before the new dir's event was applied; the test proves nothing")
	}
	release()
	testprog.WaitFor(t, 5*time.Second, "the new gateway-a supervised", func() bool {
		st := f.State("gateway-a")
		return st == "up" || st == "starting"
	})
}

// A static service cannot be unregistered; a protected one is root's.
func TestUnregisterStatic(t *testing.T) {
	f := mt.Start(t, gatewayConfig(), nil)
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"web"}}, control.CodeFailed, "static service of hinit.yaml")
	if st := f.State("web"); st != "up" {
		t.Errorf("web is %q after a refused unregister", st)
	}
}

// start --wait means "got there and stayed": a service that exits with
// a no-restart code, or backs off, within the wait fails with the reason.
func TestStartWaitStays(t *testing.T) {
	f := mt.Start(t, `services:
  fatal:
    command: `+prog("exit", "78")+`
    no_restart_exit_codes: [78]
    enabled: "false"
    `+testEnv+`  crashy:
    command: `+prog("exit", "1")+`
    enabled: "false"
    backoff: {initial: 1s}
    `+testEnv+`  steady:
    command: `+prog("sleep", "inf")+`
    enabled: "false"
    `+testEnv, nil)
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"fatal"}, Wait: "2s"}, control.CodeFailed, "fatal is exited: exit 78")
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"crashy"}, Wait: "2s"}, control.CodeFailed, "crashy is backoff: exit 1")
	began := time.Now()
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"steady"}, Wait: "2s"}, 0, "")
	if took := time.Since(began); took > 2500*time.Millisecond {
		t.Errorf("start --wait=2s of a steady service took %v", took)
	}
}

// start --wait of several services watches them all through one settle
// window. They were watched one after another: N services took N times
// the window, and a service that fell and came back up while those before
// it were watched passed.
func TestStartWaitWatchesAllAtOnce(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	f := mt.Start(t, `services:
  steady:
    command: `+prog("sleep", "inf")+`
    enabled: "false"
    `+testEnv+`  fallsonce:
    command: ["/bin/sh", "-c", "if [ -e `+marker+` ]; then exec sleep 100000; fi; touch `+marker+`; sleep 0.3; exit 1"]
    enabled: "false"
    backoff: {initial: 100ms}
    `+testEnv, nil)
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"steady", "fallsonce"}, Wait: "10s"}, control.CodeFailed, "fallsonce is backoff: exit 1")
}

// A scandir dir that is not a service (broken, refused) shows in status
// NAME as in the full table, and start or unregister say what is wrong.
func TestBrokenDirIsAddressable(t *testing.T) {
	f := mt.Start(t, "", nil)
	f.Publish("broken", "command: [x]\nrestart: sometimes\n")
	resp := f.Expect(control.Request{Verb: control.VerbStatus, Names: []string{"broken"}}, 0, "")
	if len(resp.Services) != 1 || resp.Services[0].State != "down" || resp.Services[0].Source != "scandir" {
		t.Fatalf("status broken: %+v", resp.Services)
	}
	why := resp.Services[0].Reason
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"broken"}}, control.CodeFailed,
		"broken: its scandir dir is not a service: "+why+"; fix it, or remove it with hsvc unregister broken")
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"broken"}}, 0, "")
	if _, err := os.Lstat(filepath.Join(f.Scandir, "broken")); !os.IsNotExist(err) {
		t.Errorf("the broken dir is still there after unregister: %v", err)
	}
}

// Entries the scandir watcher ignores (a symlink in place of a dir, a
// file) show in status NAME and the full table as a row down with the
// reason; start says what is wrong; unregister removes the entry itself,
// never what a symlink points to (issue 14 item 5).
func TestIgnoredEntryIsAddressable(t *testing.T) {
	f := mt.Start(t, "", nil)
	target := t.TempDir()
	if err := os.WriteFile(filepath.Join(target, "service.yaml"), []byte("command: [true]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(f.Scandir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.Scandir, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 5*time.Second, "both noted", func() bool { return f.Status("linked") != nil && f.Status("plain") != nil })
	want := map[string]string{
		"linked": "ignored: a symlink, never followed; rename a real dir into place",
		"plain":  "ignored: not a directory",
	}
	rows := map[string]control.Status{}
	for _, st := range f.Expect(control.Request{Verb: control.VerbStatus}, 0, "").Services {
		rows[st.Name] = st
	}
	for name, why := range want {
		st := f.Status(name)
		if st.State != "down" || st.Source != "scandir" || st.Reason != why {
			t.Errorf("status %s: %+v, want down from scandir: %s", name, st, why)
		}
		if rows[name] != *st {
			t.Errorf("table row %s: %+v, want %+v", name, rows[name], *st)
		}
		f.Expect(control.Request{Verb: control.VerbStart, Names: []string{name}}, control.CodeFailed,
			name+": its scandir dir is not a service: "+why+"; fix it, or remove it with hsvc unregister "+name)
	}
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"linked"}}, 0, "")
	if _, err := os.Lstat(filepath.Join(f.Scandir, "linked")); !os.IsNotExist(err) {
		t.Errorf("the symlink is still there after unregister: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, "service.yaml")); err != nil {
		t.Errorf("unregister reached through the symlink: %v", err)
	}
	testprog.WaitFor(t, 5*time.Second, "linked forgotten", func() bool { return f.Status("linked") == nil })
}

// A gateway registered at run time gets the stop timeout the boot
// reconcile would give it: hermes' stop budget for its profile's drains
// (config.yaml's agent.restart_drain_timeout, cron_drain_timeout; issue
// 13); another template's instance keeps its template's.
func TestRegisterGatewayDrainStopTimeout(t *testing.T) {
	f := mt.Start(t, "templates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv+
		"  other:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv+
		"reconcile: {home: \"${HERMES_HOME}\", template: gateway}\n", nil)
	for _, p := range []string{"coder", "plain"} {
		if err := os.MkdirAll(filepath.Join(f.Home, "profiles", p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.Home, "profiles", "coder", "config.yaml"), []byte("agent:\n  restart_drain_timeout: 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ template, instance, want string }{
		{"gateway", "coder", "stop_timeout: 1m30s\n"},
		{"gateway", "plain", "stop_timeout: 1m10s\n"},
		{"other", "coder", ""},
	} {
		name := tc.template + "-" + tc.instance
		f.Expect(control.Request{Verb: control.VerbRegister, Template: tc.template, Instance: tc.instance, Down: true}, 0, "")
		b, err := os.ReadFile(filepath.Join(f.Scandir, name, "service.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); tc.want != "" && !strings.Contains(got, tc.want) || tc.want == "" && strings.Contains(got, "stop_timeout") {
			t.Errorf("%s's service.yaml:\n%s\nwant %q", name, got, tc.want)
		}
	}
}

// An ignored entry whose name breaks the name rule is listed quoted: an
// escape sequence or a newline in it never reaches root's terminal raw.
func TestIgnoredBadNameIsQuoted(t *testing.T) {
	f := mt.Start(t, "", nil)
	name := "x\x1b[2J\nfake  up"
	if err := os.WriteFile(filepath.Join(f.Scandir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var row *control.Status
	testprog.WaitFor(t, 5*time.Second, "the entry listed", func() bool {
		for _, st := range f.Do(control.Request{Verb: control.VerbStatus}).Services {
			if strings.HasPrefix(st.Reason, "ignored: ") {
				row = &st
				return true
			}
		}
		return false
	})
	if want := `"x\x1b[2J\nfake  up"`; row.Name != want || strings.ContainsAny(row.Reason, "\x1b\n") {
		t.Fatalf("row %q reason %q; want name %s and no raw control bytes", row.Name, row.Reason, want)
	}
}

// A service started for one run wants down while it runs (s6's "want
// down"), yet waiting for it to be up or ready must not give up on it
// while it is starting: s6-svc -o -wU, s6-svwait -U, hsvc wait --ready.
func TestWaitOnOnceStart(t *testing.T) {
	f := mt.Start(t, `services:
  slow:
    command: `+prog("notify", "3", "400ms")+`
    ready: {notify_fd: 3}
    enabled: "false"
    `+testEnv, nil)
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"slow"}, Once: true}, 0, "")
	f.Expect(control.Request{Verb: control.VerbWait, Names: []string{"slow"}, Until: control.UntilReady, Wait: "5s"}, 0, "")
	f.Expect(control.Request{Verb: control.VerbStop, Names: []string{"slow"}, Wait: "5s"}, 0, "")
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"slow"}, Once: true, Wait: "5s"}, 0, "")
	if st := f.State("slow"); st != "up" {
		t.Fatalf("slow is %q after start --once --wait, want up", st)
	}
}

// A stop and a start of one gateway at once leave its desired_state and
// what the service wants agreeing: the record and the request it records
// are made together, and a start or stop of a stopping service shows in
// its status at once. Before, status kept the old want until the process
// exited (this failed within 200 rounds), and the two requests' records and
// applications could land in opposite orders: the next boot started a
// gateway the user had stopped, or the other way round.
func TestStartStopRaceRecordsWhatWasApplied(t *testing.T) {
	f, state := coderGateway(t)
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder", Down: true}, 0, "")
	for i := range 300 {
		var wg sync.WaitGroup
		for _, verb := range []string{control.VerbStop, control.VerbStart} {
			wg.Go(func() { f.Do(control.Request{Verb: verb, Names: []string{"gateway-coder"}}) })
		}
		wg.Wait()
		if want, d := f.Status("gateway-coder").Want, desiredState(state); (want == "up") != (d == "running") {
			t.Fatalf("round %d: the service wants %s, desired_state is %q", i, want, d)
		}
	}
}

// A request whose wish cannot be recorded for the next boot is applied, and
// answered as a failure that says so: it answered OK, and a gateway the user
// stopped came back at the next boot. A run once records nothing: it
// recorded "running", and the next boot started a gateway the user stopped.
func TestDesiredStateUnrecordedIsSaid(t *testing.T) {
	f, state := coderGateway(t)
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder", Down: true}, 0, "")
	gw := []string{"gateway-coder"}
	f.Expect(control.Request{Verb: control.VerbStop, Names: gw}, 0, "")
	f.Expect(control.Request{Verb: control.VerbOnce, Names: gw}, 0, "")
	f.Expect(control.Request{Verb: control.VerbStart, Names: gw, Once: true}, 0, "")
	if d := desiredState(state); d != "stopped" {
		t.Fatalf("after stop, once and start --once, desired_state is %q, want stopped", d)
	}

	// A state file hinit will not write through.
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", state); err != nil {
		t.Fatal(err)
	}
	f.Expect(control.Request{Verb: control.VerbStop, Names: gw}, control.CodeFailed, "stop done, but gateway-coder: desired_state stopped not recorded")
	if want := f.Status("gateway-coder").Want; want != "down" {
		t.Fatalf("the unrecorded stop was not applied: want %s", want)
	}
	f.Expect(control.Request{Verb: control.VerbStart, Names: gw}, control.CodeFailed, "start done, but gateway-coder: desired_state running not recorded")
	if want := f.Status("gateway-coder").Want; want != "up" {
		t.Fatalf("the unrecorded start was not applied: want %s", want)
	}
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: gw, Wait: "10s"}, control.CodeFailed, "unregister done, but gateway-coder: desired_state stopped not recorded")
	if f.Status("gateway-coder") != nil {
		t.Fatal("the unrecorded unregister left gateway-coder registered")
	}
	// A profile dir already gone (hermes profile delete) leaves nothing to
	// record: the unregister succeeds.
	if err := os.MkdirAll(filepath.Join(f.Home, "profiles", "gone"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "gone"}, 0, "")
	if err := os.RemoveAll(filepath.Join(f.Home, "profiles", "gone")); err != nil {
		t.Fatal(err)
	}
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"gateway-gone"}, Wait: "10s"}, 0, "")
}

// A start racing an unregister either comes first (and the unregister
// stops it) or finds the service gone: it never records "running" for a
// gateway unregistered. Before, its lookup came before the unregister's
// removal and its record after it, and the next boot started the gateway.
func TestStartRacingUnregisterRecordsNothing(t *testing.T) {
	f, state := coderGateway(t)
	gw := []string{"gateway-coder"}
	for i := range 150 {
		f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder", Down: true}, 0, "")
		var start, unreg *control.Response
		var wg sync.WaitGroup
		wg.Go(func() { start = f.Do(control.Request{Verb: control.VerbStart, Names: gw}) })
		wg.Go(func() { unreg = f.Do(control.Request{Verb: control.VerbUnregister, Names: gw, Wait: "10s"}) })
		wg.Wait()
		if !unreg.OK || !start.OK && start.Code != control.CodeNoService {
			t.Fatalf("round %d: start %+v, unregister %+v", i, start, unreg)
		}
		if d := desiredState(state); d != "stopped" {
			t.Fatalf("round %d: gateway-coder unregistered (start answered %d), desired_state %q", i, start.Code, d)
		}
	}
}

// A patient wait (s6-svwait) waits on for a service down by choice, which
// someone may start meanwhile, and takes a crash loop's backoff for down;
// hsvc wait answers at once that a down service will not come up.
// Before, s6-svwait -u, then s6-svc -u, failed at once with "is down", and
// s6-svwait -D on a crash loop timed out, where s6 answers 0 both times.
func TestPatientWait(t *testing.T) {
	f := mt.Start(t, "templates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv, nil)
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "a", Down: true}, 0, "")
	up := control.Request{Verb: control.VerbWait, Names: []string{"gateway-a"}, Until: control.UntilUp, Wait: "10s"}
	f.Expect(up, control.CodeFailed, "gateway-a is down")
	up.Patient = true
	done := make(chan *control.Response, 1)
	go func() { done <- f.Do(up) }()
	select {
	case resp := <-done:
		t.Fatalf("a patient wait on a down service answered %+v at once", resp)
	case <-time.After(200 * time.Millisecond): // it waits: nothing to sync on but its answer
	}
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"gateway-a"}}, 0, "")
	if resp := <-done; !resp.OK {
		t.Fatalf("patient wait after the start: %+v", resp)
	}

	f.Publish("crash", "command: [/bin/false]\nbackoff: {initial: 1h, max: 1h}\n"+testEnv)
	testprog.WaitFor(t, 5*time.Second, "crash backing off", func() bool { return f.State("crash") == "backoff" })
	down := control.Request{Verb: control.VerbWait, Names: []string{"crash"}, Until: control.UntilDown, Wait: "300ms"}
	f.Expect(down, control.CodeTimeout, "timed out")
	down.Patient = true
	f.Expect(down, 0, "")
}

// coderGateway starts a manager with the gateway template and a reconcile
// home holding the profile coder, and returns it with the path of coder's
// gateway_state.json.
func coderGateway(t *testing.T) (*mt.Fixture, string) {
	t.Helper()
	return coderGatewayWith(t, "")
}

// coderGatewayWith is coderGateway with more keys (each line indented as
// the template's) in the template.
func coderGatewayWith(t *testing.T, keys string) (*mt.Fixture, string) {
	t.Helper()
	f := mt.Start(t, "reconcile: {home: \"${HERMES_HOME}\", template: gateway}\ntemplates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n"+keys+"    "+testEnv, nil)
	dir := filepath.Join(f.Home, "profiles", "coder")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return f, filepath.Join(dir, "gateway_state.json")
}

// desiredState is the desired_state of the state file at path, "" when
// there is none.
func desiredState(path string) string {
	var rec struct {
		Desired string `json:"desired_state"`
	}
	b, _ := os.ReadFile(path)
	json.Unmarshal(b, &rec)
	return rec.Desired
}

// A start or restart asked once the container's shutdown has begun is
// refused before it records anything: the shutdown records nothing, so the
// gateway that ran comes back at the next boot. (The stop-without-CAP_KILL
// fix recorded again what the service wanted then, down in a shutdown.)
func TestStartDuringShutdownRecordsNothing(t *testing.T) {
	for _, verb := range []string{control.VerbStart, control.VerbRestart} {
		t.Run(verb, func(t *testing.T) {
			f, state := coderGateway(t)
			f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder"}, 0, "")
			if d := desiredState(state); d != "running" {
				t.Fatalf("after register, desired_state %q", d)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f.M.Shutdown(ctx, time.Now().Add(5*time.Second)) // docker stop
			resp := f.Do(control.Request{Verb: verb, Names: []string{"gateway-coder"}})
			if resp.Code != control.CodeFailed || !strings.Contains(resp.Error, "the container is shutting down") {
				t.Errorf("%s during the shutdown answered %d %q, want %d and why", verb, resp.Code, resp.Error, control.CodeFailed)
			}
			if d := desiredState(state); d != "running" {
				t.Errorf("a refused %s during the shutdown left desired_state %q, want running", verb, d)
			}
		})
	}
}

// A gateway stop whose signal could not be sent (no CAP_KILL) leaves the
// gateway wanted up: "running" is recorded again also when the process
// ended on its own meanwhile, and backs off to its restart; that was
// recorded only while a process ran, and the next boot kept the gateway
// down.
func TestFailedStopRecordsRunningWhileRestarting(t *testing.T) {
	// A minute's backoff: the gateway is sure to be between two processes
	// when the stop's answer is recorded.
	f, state := coderGatewayWith(t, "    backoff: {initial: 1m, max: 1m}\n")
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder"}, 0, "")
	failStop(t, f, func(pid int, s *supervise.Service) {
		syscall.Kill(pid, syscall.SIGKILL) // it ends on its own before the stop's signal
		testprog.WaitFor(t, 5*time.Second, "the gateway's backoff", func() bool { return s.Status().State == supervise.StateBackoff })
	})
	if d := desiredState(state); d != "running" {
		t.Errorf("after a stop that could not be sent, desired_state %q, want running (the gateway restarts)", d)
	}
}

// A gateway stopped for good, then run once (start --once records
// nothing), whose stop could not be sent stays stopped for the next boot:
// the run once was no lasting wish. The process running made it "running".
func TestFailedStopAfterRunOnceKeepsStopped(t *testing.T) {
	f, state := coderGateway(t)
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder"}, 0, "")
	f.Expect(control.Request{Verb: control.VerbStop, Names: []string{"gateway-coder"}, Wait: "5s"}, 0, "")
	f.Expect(control.Request{Verb: control.VerbStart, Names: []string{"gateway-coder"}, Once: true, Wait: "5s"}, 0, "")
	if d := desiredState(state); d != "stopped" {
		t.Fatalf("after stop and a run once, desired_state %q, want stopped", d)
	}
	failStop(t, f, func(int, *supervise.Service) {})
	if d := desiredState(state); d != "stopped" {
		t.Errorf("a failed stop of a gateway run once left desired_state %q, want stopped", d)
	}
}

// failStop applies a stop of gateway-coder whose signal cannot be sent
// (EPERM, as without CAP_KILL), after meanwhile(pid of its process).
func failStop(t *testing.T, f *mt.Fixture, meanwhile func(pid int, s *supervise.Service)) {
	t.Helper()
	err := manager.ApplyDesired(f.M, "gateway-coder", control.VerbStop, func(s *supervise.Service) error {
		pid := s.Status().PID
		if pid == 0 {
			t.Fatal("gateway-coder runs no process")
		}
		meanwhile(pid, s)
		return syscall.EPERM
	})
	if err != syscall.EPERM {
		t.Fatalf("the stop answered %v, want EPERM", err)
	}
}

// PID 1's loop calls Stopping at the first SIGTERM: it returns while a
// gateway request is under way (its record's fsyncs take seconds on a busy
// disk, its start waits for the runner); it waited for that request, and
// PID 1 forwarded no signal meanwhile. Shutdown waits for it instead.
func TestStoppingDoesNotWaitForARequest(t *testing.T) {
	f := mt.Start(t, mt.Env+"services:\n  d:\n    command: [sleep, inf]\n", nil)
	release := manager.HoldRequest(f.M, "d")
	stopping := make(chan struct{})
	go func() { f.M.Stopping(); close(stopping) }()
	select {
	case <-stopping:
	case <-time.After(5 * time.Second):
		release()
		t.Fatal("Stopping waited for the gateway request under way")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shut := make(chan struct{})
	go func() { f.M.Shutdown(ctx, time.Now().Add(5*time.Second)); close(shut) }()
	release()
	select {
	case <-shut:
	case <-ctx.Done():
		t.Fatal("Shutdown did not end")
	}
	if st := f.State("d"); st != "down" {
		t.Errorf("d after the shutdown: %s, want down", st)
	}
}

// A request that never ends (a hung volume) does not keep the services
// from their stop, nor from their time to stop: Shutdown waits for it a
// quarter of the time left at most, and a service that ends at its stop
// signal is not killed.
func TestShutdownDoesNotWaitPastDeadline(t *testing.T) {
	// d takes 0.2 s to end at its TERM.
	f := mt.Start(t, mt.Env+"services:\n  d:\n    command: [sh, -c, 'trap \"sleep 0.2; exit 7\" TERM; while :; do sleep 1 & wait $!; done']\n    stop: {timeout: 30s}\n", nil)
	release := manager.HoldRequest(f.M, "d")
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shut := make(chan struct{})
	go func() { f.M.Shutdown(ctx, time.Now().Add(2*time.Second)); close(shut) }()
	select {
	case <-shut:
	case <-ctx.Done():
		t.Fatal("Shutdown waited for the request past its deadline")
	}
	st := f.Status("d")
	if st.State != "down" || st.LastExit == nil || st.LastExit.Code != 7 {
		t.Errorf("d after the shutdown: %+v, want down, exited 7 at its TERM", st)
	}
	// The wait given up leaves nothing a later request of another service
	// waits behind: it left a writer on a lock every request took a share
	// of, and each of them, for any service, waited for the hung one.
	other := make(chan struct{})
	go func() { manager.HoldRequest(f.M, "e")(); close(other) }()
	select {
	case <-other:
	case <-time.After(5 * time.Second):
		t.Error("a request for e waits for d's, which the shutdown gave up on")
	}
}

// A register once the shutdown has begun is refused as a start is: it
// neither publishes a slot nor records "running" for the next boot.
func TestRegisterDuringShutdown(t *testing.T) {
	f, state := coderGateway(t)
	f.M.Stopping()
	resp := f.Do(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder"})
	if resp.Code != control.CodeFailed || !strings.Contains(resp.Error, "the container is shutting down") {
		t.Errorf("register during the shutdown answered %d %q, want %d and why", resp.Code, resp.Error, control.CodeFailed)
	}
	if d := desiredState(state); d != "" {
		t.Errorf("a refused register recorded desired_state %q", d)
	}
	if _, err := os.Lstat(filepath.Join(f.Scandir, "gateway-coder")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused register left its slot: %v", err)
	}
}

// s6-svc -O (once) starts nothing: it is answered during the shutdown as
// before it, when only starts are refused.
func TestOnceDuringShutdown(t *testing.T) {
	f := mt.Start(t, mt.Env+"services:\n  d:\n    command: [sleep, inf]\n", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.M.Stopping() // docker stop: the shutdown has begun
	f.Expect(control.Request{Verb: control.VerbOnce, Names: []string{"d"}}, 0, "")
	f.M.Shutdown(ctx, time.Now().Add(5*time.Second))
	f.Expect(control.Request{Verb: control.VerbOnce, Names: []string{"d"}}, 0, "")
}

// An essential one-shot that exits 0 under restart: on-failure is done,
// not failed: hinit runs on, and hsvc check (the HEALTHCHECK) passes; it
// failed on every exited essential service, so a liveness probe restarted
// a container working as configured.
func TestCheckEssentialExitedZero(t *testing.T) {
	f := mt.Start(t, "services:\n  migrate:\n    command: [sh, -c, \"exit 0\"]\n    restart: on-failure\n    essential: true\n", nil)
	testprog.WaitFor(t, 5*time.Second, "migrate exited", func() bool { return f.State("migrate") == "exited" })
	if s := f.Shutdowns(); len(s) != 0 {
		t.Fatalf("shutdown requested: %v", s)
	}
	f.Expect(control.Request{Verb: control.VerbCheck}, 0, "")
}

// In the shipped image (compat: s6-overlay), today's hermes registers a
// profile created at run time as an s6 servicedir /run/service/gateway-P
// (S6ServiceManager.register_profile_gateway). That is the profile's
// gateway: hsvc stop --all stops it, and hsvc stop writes its slot's
// planned-stop marker and records desired_state stopped (SPEC §4), or the
// next boot would bring back a gateway the user stopped. Before, it was a
// plain scandir service to hinit.
func TestStopOfS6RegisteredGateway(t *testing.T) {
	f, dir := s6Gateway(t, false)
	state := filepath.Join(dir, "gateway_state.json")
	testprog.WaitFor(t, 5*time.Second, "gateway-coder up", func() bool { return f.State("gateway-coder") == "up" })

	all := f.Do(control.Request{Verb: control.VerbStop, All: true, Wait: "10s"})
	if st := f.State("gateway-coder"); st != "down" {
		t.Errorf("after hsvc stop --all (answered %d %q), gateway-coder is %q, want down", all.Code, all.Error, st)
	}
	f.Expect(control.Request{Verb: control.VerbStop, Names: []string{"gateway-coder"}, Wait: "10s"}, 0, "")
	b, _ := os.ReadFile(state)
	if d := desiredState(state); d != "stopped" {
		t.Errorf("after hsvc stop gateway-coder, gateway_state.json is %s: desired_state %q, want stopped (the next boot starts it again)", b, d)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gateway-planned-stop.json")); err != nil {
		t.Errorf("no planned-stop marker before the SIGTERM: %v", err)
	}
}

// hsvc stop's desired_state is read back once the gateway's rewrites in
// flight have landed. One that undid it (it read the file before hinit's
// write) is written over again; one the file kept settles hinit's record,
// so that a later start by someone else (the s6 image run on the same
// volume meanwhile) is not taken at the next boot for the gateway's
// revert. Before, nothing was read back: the revert was seen only at the
// next boot, and a stop undone by another supervisor's start came back.
func TestStopReadBack(t *testing.T) {
	settles, restore := manager.QueueSettles()
	defer restore()
	f, dir := s6Gateway(t, false)
	state := filepath.Join(dir, "gateway_state.json")
	readBack := func() {
		t.Helper()
		select {
		case settle := <-settles:
			settle()
		case <-time.After(10 * time.Second):
			t.Fatal("desired_state not read back")
		}
	}
	testprog.WaitFor(t, 5*time.Second, "gateway-coder up", func() bool { return f.State("gateway-coder") == "up" })
	f.Expect(control.Request{Verb: control.VerbStop, Names: []string{"gateway-coder"}, Wait: "10s"}, 0, "")
	// The gateway's rewrite, from a reading before hinit's write.
	if err := os.WriteFile(state, []byte(`{"gateway_state":"stopped","desired_state":"running","updated_at":"2026-11-29T17:00:00.000000+00:00"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	readBack()
	if d := desiredState(state); d != "stopped" {
		t.Fatalf("after the read-back of a stop the gateway undid, desired_state %q, want stopped", d)
	}
	readBack() // the write again, read back in turn
	rec := filepath.Join(dir, gwstate.RecordName)
	if b, _ := os.ReadFile(rec); !strings.Contains(string(b), `"settled":true`) {
		t.Fatalf("record after the read-back: %s; want it settled", b)
	}
	// The s6 image's start and its gateway's own rewrite, before hinit's
	// next boot.
	if err := os.WriteFile(state, []byte(`{"gateway_state":"running","desired_state":"running","updated_at":"2026-12-01T10:00:00.000000+00:00"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if in, err := gwstate.ReadIntent(state, nil); err != nil || in != (gwstate.Intent{State: gwstate.Running}) {
		t.Errorf("the next boot reads %+v, %v; want running, the later start", in, err)
	}
	select {
	case <-settles:
		t.Error("a settled stop was read back again")
	default:
	}
}

// An s6 dir gateway-coder's logger, gateway-coder/log, is no profile's
// gateway: hsvc stop --all leaves it up, as s6 leaves s6-log up. It
// stopped it, and the gateway started again wrote into a pipe nobody read.
func TestS6GatewayLoggerIsNoGateway(t *testing.T) {
	f, _ := s6Gateway(t, true)
	up := func(name string) bool {
		for _, s := range f.Do(control.Request{Verb: control.VerbStatus}).Services {
			if s.Name == name {
				return s.State == "up"
			}
		}
		return false
	}
	testprog.WaitFor(t, 5*time.Second, "gateway-coder and its logger up", func() bool {
		return up("gateway-coder") && up("gateway-coder/log")
	})
	all := f.Do(control.Request{Verb: control.VerbStop, All: true, Wait: "10s"})
	if !up("gateway-coder/log") {
		t.Errorf("after hsvc stop --all (answered %d %q), the logger gateway-coder/log is not up (%v), want up (it is no gateway; s6-log stays up under s6)", all.Code, all.Error, f.Do(control.Request{Verb: control.VerbStatus}).Services)
	}
}

// s6Gateway starts a manager under compat s6-overlay with the gateway
// template of the image and registers what today's hermes does for
// `hermes profile create coder` after `hermes -p coder gateway start`
// wrote desired_state running: an s6 servicedir /run/service/gateway-coder,
// built under a dot name, with a log/run when withLog. dir is the
// profile's dir.
func s6Gateway(t *testing.T, withLog bool) (f *mt.Fixture, dir string) {
	t.Helper()
	f = mt.Start(t, "compat: s6-overlay\nreconcile: {home: \"${HERMES_HOME}\", template: gateway}\ntemplates:\n  gateway:\n    command: "+
		mt.Prog("sleep", "inf")+"\n    stop: {planned_stop_marker: \"${HERMES_HOME}/profiles/{instance}/.gateway-planned-stop.json\"}\n    "+mt.Env, nil)
	dir = filepath.Join(f.Home, "profiles", "coder")
	tmp := filepath.Join(f.Scandir, ".gateway-coder.tmp")
	files := map[string]string{
		filepath.Join(dir, "gateway_state.json"): `{"gateway_state":"running","desired_state":"running"}`,
		filepath.Join(tmp, "type"):               "longrun\n",
		filepath.Join(tmp, "run"):                "#!/bin/sh\nexec sleep 1000\n",
	}
	if withLog {
		files[filepath.Join(tmp, "log", "run")] = "#!/bin/sh\nexec cat >/dev/null\n"
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if filepath.Base(p) == "run" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(tmp, filepath.Join(f.Scandir, "gateway-coder")); err != nil {
		t.Fatal(err)
	}
	return f, dir
}

// A scandir dir that is not a service says why, naming the file at fault
// once: the s6 control file or run file for an s6 dir, service.yaml with
// its line for a YAML error. Before, every reason began with
// "<dir>/service.yaml: ", a file an s6 dir does not have, and a refused
// service.yaml was named twice.
func TestDirReasonNamesItsFile(t *testing.T) {
	f := mt.Start(t, "compat: s6-overlay\n", nil)
	s := f.Scandir
	for _, tc := range []struct {
		name  string
		files map[string]string // name: content; run is executable
		mode  map[string]os.FileMode
		want  string
	}{
		{"a", map[string]string{"run": "#!/bin/sh\n", "notification-fd": "2\n"}, nil,
			s + `/a/notification-fd: "2" is not a number in 3..1023`},
		{"f", map[string]string{"run": "#!/bin/sh\n"}, map[string]os.FileMode{"run": 0o757},
			"refused: " + s + "/f/run is writable by every user (mode 0757); chmod o-w it"},
		{"bad6", map[string]string{"service.yaml": "command: [sleep, inf]\n"}, map[string]os.FileMode{"service.yaml": 0o646},
			"refused: " + s + "/bad6/service.yaml is writable by every user (mode 0646); chmod o-w it"},
		{"broken", map[string]string{"service.yaml": "command: [x]\nrestart: sometimes\n"}, nil,
			s + `/broken/service.yaml:2: restart: "sometimes" is not a restart policy (always, on-failure, never)`},
		{"nope-x", map[string]string{"service.yaml": "template: nope\ninstance: x\n"}, nil,
			s + `/nope-x/service.yaml:1: template "nope": no such template (the configuration's: none)`},
	} {
		tmp := filepath.Join(s, "."+tc.name)
		if err := os.Mkdir(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range tc.files {
			mode := os.FileMode(0o644)
			if name == "run" {
				mode = 0o755
			}
			if m, ok := tc.mode[name]; ok {
				mode = m
			}
			p := filepath.Join(tmp, name)
			if err := os.WriteFile(p, []byte(content), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, mode); err != nil { // whatever the umask
				t.Fatal(err)
			}
		}
		if err := os.Rename(tmp, filepath.Join(s, tc.name)); err != nil {
			t.Fatal(err)
		}
		testprog.WaitFor(t, 5*time.Second, tc.name+" noted", func() bool { st := f.Status(tc.name); return st != nil && st.Reason != "" })
		if got := f.Status(tc.name).Reason; got != tc.want {
			t.Errorf("status %s says\n %q\nwant\n %q", tc.name, got, tc.want)
		}
	}
}

// A running scandir service whose service.yaml turns bad keeps its last
// good definition, and status says the new one is not applied, and why;
// a good one again clears it. Before, status showed it up with no word of
// it (only hinit's log did), and docs/decisions.md said status tells.
func TestStatusSaysDefinitionNotApplied(t *testing.T) {
	f := mt.Start(t, mt.Env, nil)
	f.Publish("web", "command: "+mt.Prog("sleep", "1h")+"\n")
	testprog.WaitFor(t, 5*time.Second, "web up", func() bool { return f.Status("web").State == "up" })
	file := filepath.Join(f.Scandir, "web", "service.yaml")
	if err := os.WriteFile(file, []byte("command: "+mt.Prog("sleep", "1h")+"\nrestart: sometimes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 5*time.Second, "web's note", func() bool { return f.Status("web").NotApplied != "" })
	st := f.Status("web")
	want := file + `:2: restart: "sometimes" is not a restart policy (always, on-failure, never)`
	if st.State != "up" || st.NotApplied != want {
		t.Errorf("status web: state %s, not_applied %q; want up, %q", st.State, st.NotApplied, want)
	}
	if err := os.WriteFile(file, []byte("command: "+mt.Prog("sleep", "1h")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 5*time.Second, "web's note cleared", func() bool { return f.Status("web").NotApplied == "" })
}

// A scandir dir that never was a service (broken, ignored) has no last
// good definition running: status gives its reason once, with no
// not_applied. Before, not_applied repeated the reason, and the table read
// "R; its dir's new definition is not applied: R".
func TestNotedDirHasNoNotApplied(t *testing.T) {
	f := mt.Start(t, "", nil)
	before := time.Now()
	f.Publish("broken", "command: [x]\nrestart: sometimes\n")
	if err := os.WriteFile(filepath.Join(f.Scandir, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 5*time.Second, "both noted", func() bool { return f.Status("broken") != nil && f.Status("plain") != nil })
	all := f.Expect(control.Request{Verb: control.VerbStatus}, 0, "").Services
	for _, name := range []string{"broken", "plain"} {
		st := f.Status(name)
		if st.Reason == "" || st.NotApplied != "" {
			t.Errorf("status %s: reason %q, not_applied %q; want a reason and no not_applied", name, st.Reason, st.NotApplied)
		}
		// since: when it was found not to be a service (it was zero).
		if st.Since.Before(before) || st.Since.After(time.Now()) {
			t.Errorf("status %s: since %v; want the moment it was noted, after %v", name, st.Since, before)
		}
		for _, row := range all {
			if row.Name == name && (row.NotApplied != "" || !row.Since.Equal(st.Since)) {
				t.Errorf("status (all), %s: not_applied %q, since %v; want none, %v", name, row.NotApplied, row.Since, st.Since)
			}
		}
	}
}

// A target that cannot take a stop does not keep the others from it: the
// verb went through the targets in order and answered at the first that
// failed, and those after it were neither stopped nor recorded (stop --all
// with one gateway unregistered meanwhile stopped none of the rest). A
// service of --all gone meanwhile is no target any more.
func TestStopGoesOnPastAFailedTarget(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("all=%v", all), func(t *testing.T) {
			f := mt.Start(t, "services:\n  a: {command: "+mt.Prog("sleep", "inf")+"}\n  b: {command: "+mt.Prog("sleep", "inf")+"}\n"+mt.Env, nil)
			testprog.WaitFor(t, 5*time.Second, "a and b up", func() bool { return f.State("a") == "up" && f.State("b") == "up" })
			a, b := manager.Service(f.M, "a"), manager.Service(f.M, "b")
			manager.Forget(f.M, "a") // gone between the lookup and its turn
			resp := manager.StartStop(f.M, &control.Request{Verb: control.VerbStop, All: all}, a, b)
			want := control.CodeNoService
			if all {
				want = control.CodeOK
			}
			if resp.Code != want || !all && !strings.Contains(resp.Error, "no such service: a (unregistered meanwhile)") {
				t.Errorf("answered %d %q, want %d", resp.Code, resp.Error, want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := b.WaitFor(ctx, func(st supervise.Status) bool { return st.State == supervise.StateDown }); err != nil {
				t.Errorf("b, after a in the targets, was not stopped: %v (%s)", err, f.State("b"))
			}
		})
	}
}

// A scandir watcher that cannot start (here: no scandir) reports the sync
// main waits for at once, with its error logged. Before, main waited the
// whole 5 s and hinit warned "scandir not read within 5s".
func TestSyncedWhenTheWatcherFails(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hinit.yaml")
	if err := os.WriteFile(file, []byte(mt.Env), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var logged testprog.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := manager.New(ctx, manager.Options{Config: c, Scandir: filepath.Join(dir, "missing", "service"), Log: log,
		Environ: func() map[string]string { return map[string]string{} }, RequestShutdown: func(int) <-chan error { return nil }})
	select {
	case <-m.WatchScandir(ctx):
	case <-time.After(3 * time.Second):
		t.Fatal("no sync 3 s after the watcher failed to start")
	}
	if !strings.Contains(logged.String(), "scandir watcher stopped") {
		t.Errorf("the watcher's error is not logged: %s", logged.String())
	}
}

// A scandir moved away (its owner, the hermes user, may) ends the watcher
// for good: nothing put there is read until the container restarts. The
// health check then fails, asking for that restart, and a register fails
// at once instead of publishing a dir nobody reads; one waiting for the
// watcher when it stopped ends too. Before, check passed, and a register
// answered that its dir would start once read.
func TestScandirGoneFailsCheckAndRegister(t *testing.T) {
	f, _ := coderGateway(t)
	f.Expect(control.Request{Verb: control.VerbCheck}, 0, "")
	release, restore := manager.HoldEvents("gateway-held")
	defer restore()
	defer release()
	answer := make(chan *control.Response, 1)
	go func() {
		answer <- f.Do(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "held"})
	}()
	testprog.WaitFor(t, 10*time.Second, "gateway-held published", func() bool {
		_, err := os.Lstat(filepath.Join(f.Scandir, "gateway-held"))
		return err == nil
	})
	if err := os.Rename(f.Scandir, f.Scandir+".moved"); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 10*time.Second, "the watcher's end logged", func() bool {
		return strings.Contains(f.Logged.String(), "scandir watcher stopped")
	})
	if resp := <-answer; resp.Code != control.CodeFailed || !strings.Contains(resp.Error, "gateway-held is not registered: hinit stopped reading the scandir before it read its dir") {
		t.Errorf("the register waiting when the watcher stopped answered %d %q", resp.Code, resp.Error)
	}
	gone := "scandir: scandir was removed or moved"
	f.Expect(control.Request{Verb: control.VerbCheck}, control.CodeFailed,
		"hinit no longer reads the scandir: watch "+f.Scandir+": "+gone+"; restart the container")
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder"}, control.CodeFailed,
		"register gateway-coder: hinit no longer reads the scandir (watch "+f.Scandir+": "+gone+"); restart the container")
}

// TestRegisterOverAnUnsupervisedDir: a register whose dir is in the
// scandir already, not as a service (refused here; or not read, when the
// watcher ran out of descriptors), says so. It said "already registered",
// while hsvc status listed no such service.
func TestRegisterOverAnUnsupervisedDir(t *testing.T) {
	f := mt.Start(t, "templates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv, nil)
	f.Publish("gateway-x", "command: [x]\nrestart: sometimes\n")
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "x", Down: true},
		control.CodeFailed, "register gateway-x: its dir is in the scandir already, but hinit does not supervise it (not read yet, or refused: see hsvc status and hinit's log)")
}

// A register whose client leaves once its slot is published is recorded
// all the same: the slot is published, and its gateway started once the
// watcher reads it, so without "running" in its state file the next boot
// would undo what this one runs. Before, its wait for the watcher ended
// with the client and returned before the record (unless the watcher had
// added the service by then: the test failed every other run).
func TestRegisterRecordedWhenItsClientLeft(t *testing.T) {
	f, state := coderGateway(t)
	if err := os.WriteFile(state, []byte(`{"desired_state":"stopped"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	reached := make(chan struct{}, 1)
	defer manager.HoldPublishedUntilGivenUp(reached)()
	cl, err := control.Dial(f.Sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() {
		_, err := cl.Do(ctx, &control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "coder"})
		left <- err
	}()
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the register did not publish its slot")
	}
	cancel() // hsvc's own timeout; the server goes on once it has seen it
	if err := <-left; err == nil {
		t.Fatal("the register answered while held after its publish")
	}
	testprog.WaitFor(t, 10*time.Second, "gateway-coder up and recorded running", func() bool {
		return f.State("gateway-coder") == "up" && desiredState(state) == "running"
	})
}
