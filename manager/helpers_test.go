package manager

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/config"
	"hinit/control"
	"hinit/internal/testprog"
	"hinit/reaper"
)

// The test binary is every helper program too (testprog), and a child
// subreaper, so that the manager runs real processes without root.
func TestMain(m *testing.M) {
	testprog.Main()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// fixture is a Manager on a temp scandir behind a real control socket.
type fixture struct {
	t       *testing.T
	m       *Manager
	scandir string
	sock    string
	logged  testprog.Buffer // the manager's log lines

	mu        sync.Mutex
	shutdowns []int // RequestShutdown calls, guarded by mu
}

// newFixture starts a Manager with the hinit.yaml cfg (HINIT_TESTPROG is
// set for every service) and its scandir watched.
func newFixture(t *testing.T, cfg string) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, scandir: filepath.Join(dir, "service"), sock: filepath.Join(dir, control.SocketName)}
	if err := os.Mkdir(f.scandir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "hinit.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(&f.logged, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	ctx, cancel := context.WithCancel(context.Background())
	rp := reaper.New(log)
	go rp.Run(ctx)
	env := map[string]string{"PATH": os.Getenv("PATH"), "HINIT_TESTPROG": "1", "HERMES_HOME": filepath.Join(dir, "home")}
	f.m = New(ctx, Options{Config: c, Scandir: f.scandir, Spawner: rp, Log: log,
		Environ:         func() map[string]string { return env },
		RequestShutdown: f.requestShutdown,
	})
	f.m.Reconcile(env)
	f.m.StartStatic(env)
	select {
	case <-f.m.WatchScandir(ctx):
	case <-time.After(5 * time.Second):
		t.Fatal("scandir not read within 5s")
	}
	ln, err := control.Listen(f.sock, -1)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- control.Serve(ctx, ln, f.m, -1, log) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		f.m.Shutdown(sctx, time.Now().Add(5*time.Second))
		cancel()
		f.m.Wait()
		<-served
		if t.Failed() {
			t.Logf("manager log:\n%s", f.logged.String())
		}
	})
	return f
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func (f *fixture) requestShutdown(code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shutdowns = append(f.shutdowns, code)
}

// do sends req over the control socket and returns hinit's answer.
func (f *fixture) do(req control.Request) *control.Response {
	f.t.Helper()
	cl, err := control.Dial(f.sock)
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := cl.Do(ctx, &req)
	if err != nil {
		f.t.Fatalf("%s: %v", req.Verb, err)
	}
	return resp
}

// expect sends req and checks the answer's code and that its error holds
// part.
func (f *fixture) expect(req control.Request, code int, part string) *control.Response {
	f.t.Helper()
	resp := f.do(req)
	if resp.Code != code || !strings.Contains(resp.Error, part) {
		f.t.Fatalf("%s %v: code %d %q, want %d containing %q", req.Verb, req.Names, resp.Code, resp.Error, code, part)
	}
	return resp
}

// state is the state of the service called name ("" when there is none).
func (f *fixture) state(name string) string {
	if s := f.m.group.Get(name); s != nil {
		return s.Status().State
	}
	return ""
}

// publish writes a service dir into the scandir the way writers must:
// built under a dot name, then renamed into place.
func (f *fixture) publish(name, yaml string) {
	f.t.Helper()
	tmp := filepath.Join(f.scandir, "."+name+".tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte(yaml), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.scandir, name)); err != nil {
		f.t.Fatal(err)
	}
	testprog.WaitFor(f.t, 5*time.Second, name+" picked up", func() bool {
		return f.m.group.Get(name) != nil || f.m.dyn.why(name) != ""
	})
}

// prog is a YAML flow list running a test program.
func prog(name string, args ...string) string {
	var q []string
	for _, a := range testprog.Command(name, args...) {
		q = append(q, fmt.Sprintf("%q", a))
	}
	return "[" + strings.Join(q, ", ") + "]"
}
