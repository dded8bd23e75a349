package hsvc

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
	mt "hinit/manager/managertest"
)

// hsvc's tests run it against the real service manager (package manager)
// behind a real control socket, with real services: the dispatch they
// exercise is hinit's own. Only the golden status tables and the logs
// tests, which need fixed times and a log file the test writes, are
// served a fixed status.
func TestMain(m *testing.M) {
	mt.Main()
	os.Exit(m.Run())
}

// realHinit is a manager running the hinit.yaml cfg, served through wrap.
func realHinit(t *testing.T, cfg string, wrap func(control.Handler) control.Handler) *mt.Fixture {
	t.Helper()
	return mt.Start(t, cfg, wrap)
}

// asCaller serves every request as coming from c's rights (root, or a
// member of the control group), whoever runs the test.
func asCaller(root bool) func(control.Handler) control.Handler {
	return func(h control.Handler) control.Handler {
		return control.HandlerFunc(func(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
			c.Root, c.Member = root, true
			return h.Handle(ctx, c, req)
		})
	}
}

// recorder keeps the requests that reached hinit, then lets them through.
type recorder struct {
	mu   sync.Mutex
	reqs []control.Request // guarded by mu
}

func (r *recorder) wrap(h control.Handler) control.Handler {
	return control.HandlerFunc(func(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
		r.mu.Lock()
		r.reqs = append(r.reqs, *req)
		r.mu.Unlock()
		c.Root = true
		return h.Handle(ctx, c, req)
	})
}

func (r *recorder) last() control.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// fixedStatus answers status with a fixed list of services (all of them,
// or those named); it is not a hinit and answers nothing else.
func fixedStatus(services []control.Status) control.Handler {
	return control.HandlerFunc(func(_ context.Context, _ control.Caller, req *control.Request) *control.Response {
		if req.Verb != control.VerbStatus {
			return control.Errorf(control.CodeFailed, "fixed status: %s not served", req.Verb)
		}
		if len(req.Names) == 0 {
			return &control.Response{OK: true, Services: services}
		}
		resp := control.OK()
		for _, n := range req.Names {
			found := false
			for _, s := range services {
				if s.Name == n {
					resp.Services, found = append(resp.Services, s), true
				}
			}
			if !found {
				return control.Errorf(control.CodeNoService, "no such service: %s", n)
			}
		}
		return resp
	})
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
