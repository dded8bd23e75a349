package hsvc

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
)

// fakeHinit answers the control protocol like a small hinit would, from a
// fixed list of services, and records the requests it got.
type fakeHinit struct {
	mu              sync.Mutex
	services        []control.Status
	reqs            []control.Request // guarded by mu
	essentialFailed bool
}

func (f *fakeHinit) Handle(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	f.mu.Lock()
	f.reqs = append(f.reqs, *req)
	f.mu.Unlock()
	for _, n := range req.Names {
		if f.find(n) == nil && n != "never" {
			return control.Errorf(control.CodeNoService, "no such service: %s; see hsvc list", n)
		}
		if n == "locked" && req.Verb != control.VerbStatus {
			return control.Errorf(control.CodePermission, "permission denied: %s is protected; run hsvc as root", n)
		}
	}
	switch req.Verb {
	case control.VerbStatus:
		return f.status(req.Names)
	case control.VerbList:
		return f.list(req.Prefix)
	case control.VerbRegister:
		if req.Template != "gateway" {
			return control.Errorf(control.CodeFailed, "no template %q in hinit.yaml; see its templates:", req.Template)
		}
		return &control.Response{OK: true, Names: []string{req.Template + "-" + req.Instance}}
	case control.VerbWait:
		return f.wait(ctx, req)
	case control.VerbCheck:
		if f.essentialFailed {
			return control.Errorf(control.CodeFailed, "essential service dashboard failed: exited 1; see hsvc status")
		}
	}
	return control.OK()
}

func (f *fakeHinit) find(name string) *control.Status {
	for i := range f.services {
		if f.services[i].Name == name {
			return &f.services[i]
		}
	}
	return nil
}

func (f *fakeHinit) status(names []string) *control.Response {
	if len(names) == 0 {
		return &control.Response{OK: true, Services: f.services}
	}
	resp := control.OK()
	for _, n := range names {
		resp.Services = append(resp.Services, *f.find(n))
	}
	return resp
}

func (f *fakeHinit) list(prefix string) *control.Response {
	resp := control.OK()
	for _, s := range f.services {
		if strings.HasPrefix(s.Name, prefix) {
			resp.Names = append(resp.Names, s.Name)
		}
	}
	slices.Sort(resp.Names)
	return resp
}

// wait: "never" never gets there; everything else already has.
func (f *fakeHinit) wait(ctx context.Context, req *control.Request) *control.Response {
	if req.Names[0] != "never" {
		return control.OK()
	}
	d, _ := req.Timeout()
	if d == 0 {
		d = time.Hour
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return control.Errorf(control.CodeTimeout, "timed out after %v waiting for never to be %s", d, req.Until)
}

func (f *fakeHinit) last() control.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[len(f.reqs)-1]
}

func (f *fakeHinit) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// testNow is the fixed clock of the golden tests.
var testNow = time.Date(2026, 5, 21, 6, 18, 5, 0, time.UTC)

// serve runs h behind a real control socket until the test ends and
// returns the socket's path.
func serve(t *testing.T, h control.Handler) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), control.SocketName)
	ln, err := control.Listen(path, -1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- control.Serve(ctx, ln, h, -1, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return path
}

// newCLI is a hsvc run against the socket at sock with the fixed clock.
func newCLI(ctx context.Context, sock string) (*cli, *testprog.Buffer, *testprog.Buffer) {
	stdout, stderr := &testprog.Buffer{}, &testprog.Buffer{}
	return &cli{ctx: ctx, stdout: stdout, stderr: stderr, sock: sock, now: func() time.Time { return testNow }}, stdout, stderr
}

// waitFor polls cond until it holds or 5 s have passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
