// Package managertest runs a real service manager behind a real control
// socket for tests: the manager's own and hsvc's, which thereby exercise
// the one verb dispatch there is. Services are real child processes,
// without root; the scandir is a temp dir.
package managertest

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
	"hinit/manager"
	"hinit/reaper"
)

// Main is for a test package's TestMain: the test binary acts as the
// helper programs of testprog, and becomes a child subreaper so that the
// manager's services' orphans come back to it.
func Main() {
	testprog.Main()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(1)
	}
}

// Env is set for every service: HINIT_TESTPROG makes the test binary a
// helper program.
const Env = `env: {HINIT_TESTPROG: "1"}` + "\n"

// Fixture is a running manager.
type Fixture struct {
	t       testing.TB
	M       *manager.Manager
	Scandir string
	Home    string          // $HERMES_HOME of the services' environment; not created
	Sock    string          // the control socket
	Logged  testprog.Buffer // the manager's log lines

	mu        sync.Mutex
	shutdowns []int // guarded by mu
}

// Start runs a Manager with the hinit.yaml cfg, its scandir watched and
// its control socket served, until the test ends. wrap, when not nil,
// wraps the handler the socket serves (to record requests, or to serve a
// member's requests as such when the test runs as root).
func Start(t testing.TB, cfg string, wrap func(control.Handler) control.Handler) *Fixture {
	t.Helper()
	dir := t.TempDir()
	f := &Fixture{t: t, Scandir: filepath.Join(dir, "service"), Home: filepath.Join(dir, "home"),
		Sock: filepath.Join(dir, control.SocketName)}
	if err := os.Mkdir(f.Scandir, 0o755); err != nil {
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
	log := slog.New(slog.NewTextHandler(&f.Logged, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	ctx, cancel := context.WithCancel(context.Background())
	rp := reaper.New(log)
	go rp.Run(ctx)
	env := map[string]string{"PATH": os.Getenv("PATH"), "HINIT_TESTPROG": "1", "HERMES_HOME": f.Home}
	f.M = manager.New(ctx, manager.Options{Config: c, Scandir: f.Scandir, Spawner: rp, Log: log,
		Environ:         func() map[string]string { return env },
		RequestShutdown: f.requestShutdown,
	})
	f.M.Reconcile(env, nil)
	f.M.StartStatic(env)
	select {
	case <-f.M.WatchScandir(ctx):
	case <-time.After(5 * time.Second):
		t.Fatal("scandir not read within 5s")
	}
	var h control.Handler = f.M
	if wrap != nil {
		h = wrap(h)
	}
	ln, err := control.Listen(f.Sock, -1)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- control.Serve(ctx, ln, h, -1, log) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		f.M.Shutdown(sctx, time.Now().Add(5*time.Second))
		cancel()
		if running := f.M.Wait(sctx); running != nil {
			t.Errorf("services still running after the shutdown: %v", running)
		}
		<-served
		if t.Failed() {
			t.Logf("manager log:\n%s", f.Logged.String())
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

func (f *Fixture) requestShutdown(code int) <-chan error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shutdowns = append(f.shutdowns, code)
	taken := make(chan error, 1)
	taken <- nil
	return taken
}

// Shutdowns are the exit statuses shutdowns were requested with.
func (f *Fixture) Shutdowns() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.shutdowns...)
}

// Do sends req over the control socket and returns the answer.
func (f *Fixture) Do(req control.Request) *control.Response {
	f.t.Helper()
	cl, err := control.Dial(f.Sock)
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

// ScanNow is the request s6-svscanctl -a makes: a list of the fixture's
// scandir, named by device and inode, answered once the watcher has caught
// up with it.
func (f *Fixture) ScanNow() control.Request {
	f.t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(f.Scandir, &st); err != nil {
		f.t.Fatal(err)
	}
	return control.Request{Verb: control.VerbList, Scandir: &control.DirID{Dev: st.Dev, Ino: st.Ino}}
}

// Expect sends req and checks the answer's code and that its error holds
// part.
func (f *Fixture) Expect(req control.Request, code int, part string) *control.Response {
	f.t.Helper()
	resp := f.Do(req)
	if resp.Code != code || !strings.Contains(resp.Error, part) {
		f.t.Fatalf("%s %v: code %d %q, want %d containing %q", req.Verb, req.Names, resp.Code, resp.Error, code, part)
	}
	return resp
}

// Status is the status of the service (or noted dir) called name, or
// nil when there is none.
func (f *Fixture) Status(name string) *control.Status {
	f.t.Helper()
	resp := f.Do(control.Request{Verb: control.VerbStatus, Names: []string{name}})
	if resp.Code == control.CodeNoService || len(resp.Services) != 1 {
		return nil
	}
	return &resp.Services[0]
}

// State is the state of the service called name, "" when there is none.
func (f *Fixture) State(name string) string {
	if st := f.Status(name); st != nil {
		return st.State
	}
	return ""
}

// Publish writes a service dir into the scandir the way writers must
// (built under a dot name, then renamed into place) and waits until the
// manager shows it.
func (f *Fixture) Publish(name, yaml string) {
	f.t.Helper()
	tmp := filepath.Join(f.Scandir, "."+name+".tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte(yaml), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.Scandir, name)); err != nil {
		f.t.Fatal(err)
	}
	testprog.WaitFor(f.t, 5*time.Second, name+" picked up", func() bool { return f.Status(name) != nil })
}

// Prog is a YAML flow list running a test program.
func Prog(name string, args ...string) string {
	var q []string
	for _, a := range testprog.Command(name, args...) {
		q = append(q, fmt.Sprintf("%q", a))
	}
	return "[" + strings.Join(q, ", ") + "]"
}
