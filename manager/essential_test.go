package manager_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
	"hinit/manager"
	mt "hinit/manager/managertest"
	"hinit/supervise"
)

// Only root's word makes a service essential. A service.yaml the hermes
// user wrote in its scandir with essential: true and an exit 3 shut the
// container down with status 3 (seen as uid 10000 with hinit as PID 1 of
// a PID namespace): a shutdown hsvc gives root only. Its definition is not
// essential now; a template's essential is hinit.yaml's, whoever
// registered the instance.
func TestEssentialOnlyFromRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the dirs must be owned by another user")
	}
	const cfg = "templates:\n  job:\n    command: [/bin/sh, -c, \"exit 4\"]\n    restart: never\n    essential: true\n"
	tests := []struct {
		name  string
		owner int // of the dir and its service.yaml
		yaml  string
		want  []int // shutdowns requested
	}{
		{"hermes' own definition", 10000, "command: [/bin/sh, -c, \"exit 3\"]\nrestart: never\nessential: true\n", nil},
		{"root's definition", 0, "command: [/bin/sh, -c, \"exit 3\"]\nrestart: never\nessential: true\n", []int{3}},
		{"hermes' instance of root's essential template", 10000, "{template: job, instance: a}\n", []int{4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := mt.Start(t, cfg, nil)
			tmp := filepath.Join(f.Scandir, ".svc.tmp")
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(tmp, "service.yaml")
			if err := os.WriteFile(file, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{file, tmp} {
				if err := os.Lchown(p, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			name := "svc"
			if tc.owner == 10000 && tc.yaml[0] == '{' {
				name = "job-a"
			}
			if err := os.Rename(tmp, filepath.Join(f.Scandir, name)); err != nil {
				t.Fatal(err)
			}
			testprog.WaitFor(t, 10*time.Second, name+" exited", func() bool { return f.State(name) == "exited" })
			if got := f.Shutdowns(); !slices.Equal(got, tc.want) {
				t.Errorf("shutdowns requested %v, want %v", got, tc.want)
			}
			const ignored = "essential: true ignored: only a definition root wrote may end the container"
			if said := strings.Contains(f.Logged.String(), ignored); said != (tc.owner == 10000 && tc.want == nil) {
				t.Errorf("warning %q said %v; the log:\n%s", ignored, said, f.Logged.String())
			}
		})
	}
}

// A definition root did not write restarts a second apart at least,
// whatever backoff it asks (here 300ms): one of 1ns with a program that
// exits at once had hinit start it without end (2,700 starts in 10 s, a
// thousand log lines a second). Root's definition keeps its own.
func TestRestartFloorOfOthersDefinitions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the dir must be owned by another user")
	}
	const yaml = "command: [/bin/sh, -c, \"exit 3\"]\nbackoff: {initial: 300ms, max: 300ms, reset_after: 0s}\n"
	for _, tc := range []struct {
		owner int
		want  string // in the reason while it backs off
	}{{10000, "restarting in 1s"}, {0, "restarting in 300ms"}} {
		t.Run(fmt.Sprint("owner ", tc.owner), func(t *testing.T) { // one fixture (one reaper) at a time
			f := mt.Start(t, "", nil)
			tmp := filepath.Join(f.Scandir, ".svc.tmp")
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(tmp, "service.yaml")
			if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{file, tmp} {
				if err := os.Lchown(p, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Rename(tmp, filepath.Join(f.Scandir, "svc")); err != nil {
				t.Fatal(err)
			}
			var reason string
			testprog.WaitFor(t, 10*time.Second, "svc backing off", func() bool {
				st := f.Status("svc")
				if st != nil && st.State == "backoff" {
					reason = st.Reason
				}
				return reason != ""
			})
			if !strings.Contains(reason, tc.want) {
				t.Errorf("owner %d: reason %q, want %q", tc.owner, reason, tc.want)
			}
		})
	}
}

// TestRequestsDoNotWaitForAnotherServices: a request for one service does
// not wait behind a request for another, which may wait for its runner, its
// record or a turn of asuser.Do: the image's user, who can make all three
// slow (a tree it grows under its removals), held root's hsvc restart of a
// root service 10 s and more, behind one lock for every gateway, then one
// for every other service. A request whose client gave up before its turn
// is not applied: it landed minutes later.
func TestRequestsDoNotWaitForAnotherServices(t *testing.T) {
	f := mt.Start(t, mt.Env+"services:\n  rootsvc:\n    command: "+mt.Prog("sleep", "inf")+"\n  theirs:\n    command: "+mt.Prog("sleep", "inf")+"\n", nil)
	release := manager.HoldRequest(f.M, "theirs")
	defer release()
	answer := make(chan string, 1)
	go func() {
		cl, err := control.Dial(f.Sock)
		if err != nil {
			answer <- err.Error()
			return
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := cl.Do(ctx, &control.Request{Verb: control.VerbRestart, Names: []string{"rootsvc"}})
		switch {
		case err != nil:
			answer <- err.Error()
		case !resp.OK:
			answer <- resp.Error
		default:
			answer <- ""
		}
	}()
	select {
	case a := <-answer:
		if a != "" {
			t.Fatalf("hsvc restart rootsvc: %s", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hsvc restart rootsvc waited behind a request for another service")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	applied := false
	if err := manager.ApplyDesiredCtx(ctx, f.M, "rootsvc", control.VerbStop, func(*supervise.Service) error { applied = true; return nil }); err == nil || applied {
		t.Errorf("a request given up before its turn: %v, applied %v; want an error and not applied", err, applied)
	}
}

// TestRemovalsAsTheUserOneAtATime: the user's scandir dirs are removed one
// at a time: each removal may hold a turn of asuser.Do for its budget (a
// tree its owner grows under it), and the user, asking for many, held
// every turn, and with them the starts of its own services that root's
// requests and the shutdown waited for.
func TestRemovalsAsTheUserOneAtATime(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the dirs must be owned by another user")
	}
	f := mt.Start(t, mt.Env, nil)
	sleeper := "command: " + mt.Prog("sleep", "inf") + "\n"
	publishAsHermes(t, f, map[string]string{"a": sleeper, "b": sleeper})
	most, release := holdRemovals(t)
	for _, n := range []string{"a", "b"} {
		f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{n}}, 0, "")
	}
	testprog.WaitFor(t, 10*time.Second, "a removal under way", func() bool { return most() >= 1 })
	time.Sleep(200 * time.Millisecond) // room for a second one to begin, were it let
	if m := most(); m != 1 {
		t.Errorf("%d removals as the user at once, want 1", m)
	}
	release()
	// Over once the unregisters under way answer a wait (through the
	// socket: no removal reads removeAll after restore).
	for _, n := range []string{"a", "b"} {
		if resp := f.Do(control.Request{Verb: control.VerbUnregister, Names: []string{n}, Wait: "10s"}); !resp.OK && resp.Code != control.CodeNoService {
			t.Errorf("unregister %s --wait: %d %q", n, resp.Code, resp.Error)
		}
		if _, err := os.Lstat(filepath.Join(f.Scandir, n)); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", n, err)
		}
	}
}

// TestRegistersOfAUserOneAtATime: another user's registers publish one at a
// time: each parses its profile's config.yaml in a turn of asuser.Do, as
// slow as that user makes it, and sixteen at once (a file planted at the
// name failing each at once, to be asked again) held every turn, and
// root's records of gateways with them, 10 s and more. Root's own register
// does not wait for them.
func TestRegistersOfAUserOneAtATime(t *testing.T) {
	asMember := func(h control.Handler) control.Handler {
		return control.HandlerFunc(func(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
			if req.Instance != "root" {
				c.Root, c.Member, c.UID = false, true, 10000
			}
			return h.Handle(ctx, c, req)
		})
	}
	f := mt.Start(t, "templates:\n  gateway:\n    command: "+mt.Prog("sleep", "inf")+"\n    "+mt.Env, asMember)
	most, release, restore := manager.CountPublishes()
	defer restore()
	answers := make(chan *control.Response, 3)
	for _, n := range []string{"a", "b", "root"} {
		go func() {
			cl, err := control.Dial(f.Sock)
			if err != nil {
				answers <- control.Errorf(control.CodeFailed, "%v", err)
				return
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := cl.Do(ctx, &control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: n, Down: true})
			if err != nil {
				resp = control.Errorf(control.CodeFailed, "%v", err)
			}
			answers <- resp
		}()
	}
	// root's and one of the user's are held in their publish together,
	// never two of the user's.
	testprog.WaitFor(t, 10*time.Second, "two publishes under way", func() bool { return most() >= 2 })
	time.Sleep(200 * time.Millisecond) // room for a third one to begin, were it let
	if m := most(); m != 2 {
		t.Errorf("%d publishes at once, want 2 (root's, and one of the user's)", m)
	}
	release()
	for range 3 {
		if resp := <-answers; !resp.OK {
			t.Errorf("register: %d %q", resp.Code, resp.Error)
		}
	}
}

// A removal of a broken scandir entry that waits for the user's one
// removal at a time gives up with its client: the client was told that it
// failed ("did not answer in time"), and the dir stays. Before, the dir
// was removed once the other removal ended.
func TestRemovalGivesUpWithItsClient(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the dirs must be owned by another user")
	}
	f := mt.Start(t, mt.Env, nil)
	publishAsHermes(t, f, map[string]string{
		"a": "command: " + mt.Prog("sleep", "inf") + "\n",
		"b": "nonsense: [\n", // broken: removed by unregisterAny
	})
	most, release := holdRemovals(t)
	f.Expect(control.Request{Verb: control.VerbUnregister, Names: []string{"a"}}, 0, "")
	testprog.WaitFor(t, 10*time.Second, "a's removal under way", func() bool { return most() >= 1 })
	cl, err := control.Dial(f.Sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = cl.Do(ctx, &control.Request{Verb: control.VerbUnregister, Names: []string{"b"}})
	cancel()
	if err == nil {
		t.Fatal("unregister b answered while a's removal held the user's turn")
	}
	// b's request is over once the server has closed its connection:
	// while a's removal still holds the user's turn. Before, it waited
	// for that turn, and removed b once a's removal was let go.
	sockDir := filepath.Dir(f.Sock)
	testprog.WaitFor(t, 10*time.Second, "the server done with b's request", func() bool { return testprog.Accepted(t, sockDir) == 0 })
	release()
	if _, err := os.Lstat(filepath.Join(f.Scandir, "b")); err != nil {
		t.Errorf("b, whose unregister's client gave up, removed all the same: %v", err)
	}
	if resp := f.Do(control.Request{Verb: control.VerbUnregister, Names: []string{"a"}, Wait: "10s"}); !resp.OK && resp.Code != control.CodeNoService {
		t.Errorf("unregister a --wait: %d %q", resp.Code, resp.Error)
	}
}

// publishAsHermes publishes a scandir dir of each name with its
// service.yaml, both given to uid 10000, the image's user.
func publishAsHermes(t *testing.T, f *mt.Fixture, defs map[string]string) {
	t.Helper()
	for n, yaml := range defs {
		f.Publish(n, yaml)
		for _, p := range []string{filepath.Join(f.Scandir, n), filepath.Join(f.Scandir, n, "service.yaml")} {
			if err := os.Lchown(p, 10000, 10000); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// holdRemovals holds every removal as the user until release (at the
// test's end at the latest), counting how many wait at once at most.
func holdRemovals(t *testing.T) (most func() int, release func()) {
	most, rel, restore := manager.CountRemovals()
	release = sync.OnceFunc(rel)
	t.Cleanup(func() {
		release()
		restore()
	})
	return most, release
}
