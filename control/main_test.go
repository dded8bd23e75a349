package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// testGID is the control group of the test servers: a group no test
// process has unless a test gives it.
const testGID = 10002

// helperEnv turns the test binary into a hsvc-like client (see TestMain),
// so that permission tests can run it under another uid.
const helperEnv = "CONTROL_TEST_HELPER_SOCK"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		os.Exit(helperDial(path))
	}
	if path := os.Getenv(handoffEnv); path != "" {
		os.Exit(helperHandoff(path))
	}
	if os.Getenv(answerEnv) != "" {
		os.Exit(helperAnswer())
	}
	if path := os.Getenv(holdEnv); path != "" {
		os.Exit(helperHold(path, strings.Fields(os.Getenv(holdWhat))))
	}
	os.Exit(m.Run())
}

// helperDial sends a status request and prints the outcome as JSON:
// {"resp":...} or {"err":"unreachable|permission|other: msg"}.
func helperDial(path string) int {
	out := map[string]any{}
	c, err := Dial(path)
	var resp *Response
	if err == nil {
		resp, err = c.Do(context.Background(), &Request{Verb: VerbStatus})
	}
	switch {
	case errors.Is(err, ErrPermission):
		out["err"] = "permission"
	case errors.Is(err, ErrUnreachable):
		out["err"] = "unreachable"
	case err != nil:
		out["err"] = "other: " + err.Error()
	default:
		out["resp"] = resp
	}
	json.NewEncoder(os.Stdout).Encode(out)
	return 0
}

// testLog is a logger that writes into the test's log.
func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// fakeHandler answers like a tiny supervisor and records what it saw.
// Verb "wait" blocks until its context ends, or until release is closed
// when release is set.
type fakeHandler struct {
	mu      sync.Mutex
	calls   int
	callers []Caller      // guarded by mu
	inWait  int           // waits in progress, guarded by mu
	waiting chan struct{} // closed when a wait request has begun (if set)
	release chan struct{} // ends waits (if set)
	endedBy chan error    // receives ctx.Err() of an ended wait (if set)
}

func (f *fakeHandler) Handle(ctx context.Context, c Caller, req *Request) *Response {
	f.mu.Lock()
	f.calls++
	f.callers = append(f.callers, c)
	f.mu.Unlock()
	switch req.Verb {
	case VerbStatus:
		return &Response{OK: true, Services: []Status{{Name: "dashboard", State: "up", Want: "up", PID: 42}}}
	case VerbWait:
		return f.wait(ctx)
	}
	return OK()
}

func (f *fakeHandler) wait(ctx context.Context) *Response {
	f.mu.Lock()
	f.inWait++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inWait--
		f.mu.Unlock()
	}()
	if f.waiting != nil {
		close(f.waiting)
	}
	select {
	case <-ctx.Done():
		if f.endedBy != nil {
			f.endedBy <- ctx.Err()
		}
		return Errorf(CodeTimeout, "gave up")
	case <-f.release:
		return OK()
	}
}

func (f *fakeHandler) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeHandler) waits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inWait
}

func (f *fakeHandler) lastCaller() Caller {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.callers) == 0 {
		return Caller{}
	}
	return f.callers[len(f.callers)-1]
}

// startServer serves h on a fresh socket in dir (a temp dir when ""),
// until the test ends. tune may shorten the server's limits.
func startServer(t *testing.T, dir string, h Handler, tune func(*Server)) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, SocketName)
	ln, err := Listen(path, testGID)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: h, ControlGID: testGID, Log: testLog(t)}
	if tune != nil {
		tune(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return path
}

// rawExchange writes payload on a fresh connection and decodes the one
// line that comes back.
func rawExchange(t *testing.T, path string, payload []byte) *Response {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(payload) // may fail with EPIPE when the server gave up reading: the answer is what counts
	resp, err := readResponse(conn)
	if err != nil {
		t.Fatalf("read response to %.60q: %v", payload, err)
	}
	return resp
}
