package control

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hinit/internal/testprog"
)

func TestBadRequests(t *testing.T) {
	h := &fakeHandler{}
	path := startServer(t, "", h, nil)
	tests := []struct {
		name     string
		line     string
		wantCode int
		wantErr  string
	}{
		{"ok", `{"v":1,"verb":"status"}`, CodeOK, ""},
		{"not json", `hello`, CodeUsage, "malformed request"},
		{"array", `[1,2]`, CodeUsage, "malformed request"},
		{"trailing garbage", `{"v":1,"verb":"status"} x`, CodeUsage, "malformed request"},
		{"null", `null`, CodeUsage, "protocol version 0"},
		{"no version", `{"verb":"status"}`, CodeUsage, "protocol version 0"},
		{"future version", `{"v":2,"verb":"status"}`, CodeUsage, "protocol version 2"},
		{"unknown verb", `{"v":1,"verb":"explode"}`, CodeUsage, `unknown verb "explode"`},
		{"bad name", `{"v":1,"verb":"stop","names":["../etc"]}`, CodeUsage, `"../etc" is not a valid service name`},
		{"start nothing", `{"v":1,"verb":"start"}`, CodeUsage, "no service named"},
		{"start names and all", `{"v":1,"verb":"start","names":["a"],"all":true}`, CodeUsage, "not both"},
		{"bad duration", `{"v":1,"verb":"start","names":["a"],"wait":"soon"}`, CodeUsage, "not a duration"},
		{"negative duration", `{"v":1,"verb":"stop","all":true,"wait":"-1s"}`, CodeUsage, "not a duration"},
		{"wait sideways", `{"v":1,"verb":"wait","names":["a"],"until":"sideways"}`, CodeUsage, "until must be"},
		{"wait two", `{"v":1,"verb":"wait","names":["a","b"],"until":"up"}`, CodeUsage, "exactly one"},
		{"unknown signal", `{"v":1,"verb":"signal","names":["a"],"signal":"NOPE"}`, CodeUsage, "unknown signal"},
		{"register bad instance", `{"v":1,"verb":"register","template":"gateway","instance":"Bad"}`, CodeUsage, `"Bad" is not a valid instance name`},
		{"register dotted instance", `{"v":1,"verb":"register","template":"gateway","instance":"a.b"}`, CodeUsage, `"a.b" is not a valid instance name`},
		{"signal all and one", `{"v":1,"verb":"signal","all":true,"names":["a"],"signal":"HUP"}`, CodeUsage, "exactly one service name, not all"},
		{"wait all and one", `{"v":1,"verb":"wait","all":true,"names":["a"],"until":"up"}`, CodeUsage, "exactly one service name, not all"},
		{"unregister all and one", `{"v":1,"verb":"unregister","all":true,"names":["a"]}`, CodeUsage, "exactly one service name, not all"},
		{"register bad env", `{"v":1,"verb":"register","template":"gateway","instance":"x","env":{"A=B":"c"}}`, CodeUsage, "environment variable"},
		// the value is named, not the key
		{"register NUL in an env value", `{"v":1,"verb":"register","template":"gateway","instance":"x","env":{"A":"a\u0000b"}}`, CodeUsage, `environment variable "A": its value holds a NUL byte`},
		{"shutdown 300", `{"v":1,"verb":"shutdown","exit_code":300}`, CodeUsage, "0..255"},
		{"crlf", "{\"v\":1,\"verb\":\"list\"}\r", CodeOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := h.count()
			resp := rawExchange(t, path, []byte(tc.line+"\n"))
			if resp.Code != tc.wantCode || !strings.Contains(resp.Error, tc.wantErr) {
				t.Fatalf("got code %d %q, want %d containing %q", resp.Code, resp.Error, tc.wantCode, tc.wantErr)
			}
			if resp.OK != (resp.Code == CodeOK) {
				t.Errorf("ok=%v with code %d", resp.OK, resp.Code)
			}
			if called := h.count() > before; called != (tc.wantCode == CodeOK) {
				t.Errorf("handler called: %v", called)
			}
		})
	}
}

func TestHandlerMisbehaves(t *testing.T) {
	tests := []struct {
		name     string
		resp     func() *Response
		wantCode int
		wantErr  string
	}{
		{"panic", func() *Response { panic("boom") }, CodeFailed, "internal error"},
		{"nil", func() *Response { return nil }, CodeFailed, "no answer"},
		{"ok with code", func() *Response { return &Response{OK: true, Code: 3, Error: "x"} }, CodeNoService, "x"},
		{"not ok without code", func() *Response { return &Response{} }, CodeFailed, "status failed"},
		{"two lines", func() *Response { return Errorf(CodeFailed, "one\ntwo\n") }, CodeFailed, "one; two"},
		{"1 MiB", func() *Response { return &Response{Code: CodeFailed, Error: strings.Repeat("x", 1<<20)} }, CodeFailed, "x… (1047576 more bytes)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := HandlerFunc(func(context.Context, Caller, *Request) *Response { return tc.resp() })
			path := startServer(t, "", h, nil)
			c, err := Dial(path)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(context.Background(), &Request{Verb: VerbStatus})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Code != tc.wantCode || resp.Error != tc.wantErr && !strings.Contains(resp.Error, tc.wantErr) {
				t.Fatalf("got code %d %q, want %d %q", resp.Code, resp.Error, tc.wantCode, tc.wantErr)
			}
			// The server survived: it still answers.
			if _, err := c.Do(context.Background(), &Request{Verb: VerbList}); err != nil {
				t.Fatalf("second request: %v", err)
			}
		})
	}
}

func TestRequestSize(t *testing.T) {
	path := startServer(t, "", &fakeHandler{}, nil)
	// exact is a valid request line of exactly MaxRequest bytes.
	exact := []byte(`{"v":1,"verb":"list","prefix":"x"}`)
	exact = append(exact, strings.Repeat(" ", MaxRequest-len(exact))...)
	tests := []struct {
		name     string
		payload  []byte
		wantCode int
	}{
		{"exactly the limit", append(exact, '\n'), CodeOK},
		{"one byte over", append(append(exact, ' '), '\n'), CodeUsage},
		{"no newline, far over", []byte(`{"v":1,"verb":"list","prefix":"` + strings.Repeat("a", 4*MaxRequest)), CodeUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawExchange(t, path, tc.payload)
			if resp.Code != tc.wantCode {
				t.Fatalf("code %d (%s), want %d", resp.Code, resp.Error, tc.wantCode)
			}
			if tc.wantCode == CodeUsage && !strings.Contains(resp.Error, "request too large") {
				t.Errorf("error %q", resp.Error)
			}
		})
	}
	t.Run("through the client", func(t *testing.T) {
		c, err := Dial(path)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(context.Background(), &Request{Verb: VerbList, Prefix: strings.Repeat("a", 8*MaxRequest)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Code != CodeUsage || !strings.Contains(resp.Error, "request too large") {
			t.Fatalf("got %d %q", resp.Code, resp.Error)
		}
	})
}

// TestSilentClientDoesNotBlockOthers: a client that connects and says
// nothing holds its own goroutine only.
func TestSilentClientDoesNotBlockOthers(t *testing.T) {
	path := startServer(t, "", &fakeHandler{}, func(s *Server) { s.ReadTimeout = time.Hour })
	silent, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(ctx, &Request{Verb: VerbStatus})
	if err != nil || !resp.OK {
		t.Fatalf("second client: %v %+v", err, resp)
	}
}

func TestSilentClientIsDropped(t *testing.T) {
	path := startServer(t, "", &fakeHandler{}, func(s *Server) { s.ReadTimeout = 50 * time.Millisecond })
	silent, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := readResponse(silent)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != CodeUsage || !strings.Contains(resp.Error, "no request within") {
		t.Fatalf("got %d %q", resp.Code, resp.Error)
	}
}

func TestBusy(t *testing.T) {
	h := &fakeHandler{waiting: make(chan struct{}), release: make(chan struct{})}
	path := startServer(t, "", h, func(s *Server) { s.MaxRoot = 1 })
	first := make(chan *Response, 1)
	go func() {
		c, err := Dial(path)
		if err != nil {
			first <- nil
			return
		}
		resp, _ := c.Do(context.Background(), &Request{Verb: VerbWait, Names: []string{"a"}, Until: UntilUp})
		first <- resp
	}()
	<-h.waiting
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(context.Background(), &Request{Verb: VerbStatus})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != CodeFailed || !strings.Contains(resp.Error, "busy") || !resp.Busy {
		t.Fatalf("got %d %q (busy %v), want busy", resp.Code, resp.Error, resp.Busy)
	}
	close(h.release)
	if r := <-first; r == nil || !r.OK {
		t.Fatalf("first request: %+v", r)
	}
}

// TestHangUpCancelsWait: a client that gives up on a wait frees the
// handler at once.
func TestHangUpCancelsWait(t *testing.T) {
	h := &fakeHandler{waiting: make(chan struct{}), endedBy: make(chan error, 1)}
	path := startServer(t, "", h, nil)
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-h.waiting; cancel() }()
	_, err = c.Do(ctx, &Request{Verb: VerbWait, Names: []string{"a"}, Until: UntilDown})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Do: %v, want context.Canceled", err)
	}
	select {
	case err := <-h.endedBy:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("handler ended by %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handler still waiting after the client hung up")
	}
}

func TestDoDeadline(t *testing.T) {
	path := startServer(t, "", &fakeHandler{}, nil)
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = c.Do(ctx, &Request{Verb: VerbWait, Names: []string{"a"}, Until: UntilUp})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do: %v, want DeadlineExceeded", err)
	}
}

// TestServeStops: ending Serve's context ends waits in flight, returns,
// and removes the socket.
func TestServeStops(t *testing.T) {
	h := &fakeHandler{waiting: make(chan struct{}), endedBy: make(chan error, 1)}
	path := t.TempDir() + "/" + SocketName
	ln, err := Listen(path, -1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h, -1, testLog(t)) }()
	answer := make(chan *Response, 1)
	go func() {
		c, err := Dial(path)
		if err != nil {
			answer <- nil
			return
		}
		resp, _ := c.Do(context.Background(), &Request{Verb: VerbWait, Names: []string{"a"}, Until: UntilUp})
		answer <- resp
	}()
	<-h.waiting
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if resp := <-answer; resp == nil || resp.Code != CodeTimeout {
		t.Fatalf("waiting client got %+v, want the handler's timeout answer", resp)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket still there after Serve: %v", err)
	}
}

// TestServeStopsWithASilentClient: a client that has connected and sent
// nothing does not hold Serve past its context (hinit's exit waits for
// Serve): it is told hinit is exiting. It held Serve for ReadTimeout.
func TestServeStopsWithASilentClient(t *testing.T) {
	path := t.TempDir() + "/" + SocketName
	ln, err := Listen(path, -1)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: &fakeHandler{}, ControlGID: -1, Log: testLog(t), ReadTimeout: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	silent, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// Answered after it on the same socket (Dial would take root's): the
	// silent one is accepted (one loop, in order).
	second, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := second.Write([]byte(`{"v":1,"verb":"status"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if resp, err := readResponse(second); err != nil || !resp.OK {
		t.Fatalf("second client: %v %+v", err, resp)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still waits for a client that sent nothing, 5s after its context ended")
	}
	silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := readResponse(silent)
	if err != nil || resp.Code != CodeFailed || !strings.Contains(resp.Error, "hinit is exiting") {
		t.Fatalf("silent client got %+v, %v; want hinit is exiting", resp, err)
	}
}

// TestServeListenerClosed: a listener closed under Serve is an error, and
// the requests in flight still end.
func TestServeListenerClosed(t *testing.T) {
	h := &fakeHandler{waiting: make(chan struct{}), endedBy: make(chan error, 1)}
	path := t.TempDir() + "/" + SocketName
	ln, err := Listen(path, -1)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), ln, h, -1, testLog(t)) }()
	go func() {
		if c, err := Dial(path); err == nil {
			c.Do(context.Background(), &Request{Verb: VerbWait, Names: []string{"a"}, Until: UntilUp})
		}
	}()
	<-h.waiting
	ln.Close()
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Serve: %v, want os.ErrClosed", err)
	}
	if err := <-h.endedBy; !errors.Is(err, context.Canceled) {
		t.Fatalf("wait ended by %v", err)
	}
}

// A request line ending at EOF is served when short; a long one (wait,
// --wait) is refused before anything is done: its client's hang-up could
// not be seen, and it held its slot after every client had gone.
func TestLongRequestAtEOFIsRefused(t *testing.T) {
	h := &fakeHandler{}
	path := startServer(t, "", h, nil)
	for _, tc := range []struct {
		line string
		code int
	}{
		{`{"v":1,"verb":"status"}`, CodeOK},
		{`{"v":1,"verb":"wait","names":["a"],"until":"up"}`, CodeUsage},
		{`{"v":1,"verb":"start","names":["a"],"wait":"5s"}`, CodeUsage},
	} {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write([]byte(tc.line))
		conn.(*net.UnixConn).CloseWrite()
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := readResponse(conn)
		conn.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if resp.Code != tc.code || tc.code == CodeUsage && !strings.Contains(resp.Error, "must end with a newline") {
			t.Errorf("%s at EOF: code %d %q, want %d", tc.line, resp.Code, resp.Error, tc.code)
		}
	}
	h.mu.Lock()
	n := h.calls
	h.mu.Unlock()
	if n != 1 {
		t.Errorf("the handler was called %d times, want once (status)", n)
	}
}

type answerWith Response

func (a *answerWith) Handle(context.Context, Caller, *Request) *Response {
	r := Response(*a)
	return &r
}

// An answer is written as it is, '<', '>' and '&' included: HTML escapes
// (6 bytes each) made a status of a thousand rows, each with a log path of
// '<' the hermes user chose, a gigabyte of PID 1 and more than hsvc reads.
func TestAnswerIsNotHTMLEscaped(t *testing.T) {
	logPath := "/" + strings.Repeat("<", 4094)
	path := startServer(t, "", &answerWith{OK: true, Services: []Status{{Name: "x", Reason: "<a&b>", LogPath: logPath}}}, nil)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(`{"v":1,"verb":"status"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"reason":"<a&b>"`) || !strings.Contains(line, `"log_path":"`+logPath+`"`) || len(line) > len(logPath)+300 {
		t.Errorf("answer of %d bytes, want the strings as they are (%d bytes of path):\n%.300s", len(line), len(logPath), line)
	}
}

// TestAcceptFailureWarnsOnce: accept failing again and again (out of
// descriptors) is one warning per warnEvery, the repeats summed up then,
// not a line for each retry.
func TestAcceptFailureWarnsOnce(t *testing.T) {
	var logged testprog.Buffer
	s := &Server{Log: slog.New(slog.NewTextHandler(&logged, nil))}
	s.setDefaults()
	defer s.warn.close()
	var delay time.Duration
	for range 5 {
		var err error
		if delay, err = s.acceptFailed(context.Background(), os.NewSyscallError("accept", syscall.EMFILE), delay); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logged.String(), "accept failed"); n != 1 || delay != 80*time.Millisecond {
		t.Errorf("%d warnings, delay %v after 5 failures; want 1, 80ms:\n%s", n, delay, logged.String())
	}
}

// TestHalfCloseIsNoHangUp: a client that shuts down its writes after its
// request line (nc -N, socat) still reads the answer: its request is not
// cancelled. A full hang-up is (TestHangUpCancelsWait).
func TestHalfCloseIsNoHangUp(t *testing.T) {
	for _, tc := range []struct {
		req, want string
	}{
		{`{"v":1,"verb":"start","names":["a"]}`, ""},
		// A long one's close would not be seen after it: its wait
		// would hold a slot for nobody.
		{`{"v":1,"verb":"wait","names":["a"],"until":"down"}`, "cancelled"},
	} {
		halfClose(t, tc.req, tc.want)
	}
}

// halfClose sends req, shuts down its writes and wants the answer's error
// to be want ("" for OK).
func halfClose(t *testing.T, req, want string) {
	t.Helper()
	h := HandlerFunc(func(ctx context.Context, _ Caller, _ *Request) *Response {
		select {
		case <-ctx.Done():
			return Errorf(CodeFailed, "cancelled")
		case <-time.After(500 * time.Millisecond): // a hang-up comes well before
			return OK()
		}
	})
	path := startServer(t, "", h, nil)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(req + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.UnixConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	resp, err := readResponse(conn)
	if err != nil || resp.Error != want {
		t.Fatalf("%s, half-closed: got %+v, %v; want %q", req, resp, err, want)
	}
}

// TestOutOfDescriptors: with hinit's descriptor table full (services of
// the image's user can fill it), a connection is taken with the spare
// descriptor: root's is served, another's answered with why, at once.
// Before, both waited in the accept queue until the client gave up ("did
// not answer in time: it may be stuck"). Idle again, each loop holds its
// spare: accept(2) fails with EMFILE before it looks at its queue, and a
// loop that lent its spare to wait for the next connection left that
// number free for whatever else hinit opened meanwhile.
func TestOutOfDescriptors(t *testing.T) {
	h := HandlerFunc(func(context.Context, Caller, *Request) *Response { return OK() })
	path := startServer(t, "", h, nil)
	cl, err := Dial(path) // served before the table is full: Serve runs
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := cl.Do(context.Background(), &Request{Verb: VerbList}); err != nil || !resp.OK {
		t.Fatalf("list: %+v, %v", resp, err)
	}
	spares := devNulls(t) // the two loops' spares among them
	testprog.LimitDescriptors(t, 64)
	var fillers []*os.File
	fill := func() {
		// Not /dev/null: those are the spares.
		fillers = append(fillers, testprog.FillDescriptors(t, "/proc/self/stat")...)
	}
	// ask waits for both loops to hold their spares again (a connection
	// taken with one gives it back once closed, and a spare that finds the
	// table full then is lost until there is room), fills the table, frees
	// one descriptor, for the client's own socket, and asks req.
	ask := func(sock, req string) (*Response, error) {
		testprog.WaitFor(t, 5*time.Second, "both loops' spares held", func() bool { return devNulls(t) == spares })
		fill()
		last := fillers[len(fillers)-1]
		fillers = fillers[:len(fillers)-1]
		last.Close()
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		// An answer given before the request was read makes the write
		// fail (EPIPE), as the client's exchange allows: the answer is
		// there to read.
		conn.Write([]byte(req + "\n"))
		return readResponse(conn)
	}
	rootSock := filepath.Join(filepath.Dir(path), RootSocketName)
	for round := 1; round <= 2; round++ {
		const start = `{"v":1,"verb":"start","names":["a"]}`
		resp, err := ask(path, start)
		if err != nil || resp.OK || !strings.Contains(resp.Error, "hinit is out of file descriptors") {
			t.Errorf("round %d: a member's request with the table full: %+v, %v; want hinit is out of file descriptors", round, resp, err)
		}
		if os.Geteuid() == 0 { // root's socket is root's only
			if resp, err := ask(rootSock, start); err != nil || !resp.OK {
				t.Errorf("round %d: root's request with the table full: %+v, %v; want it served", round, resp, err)
			}
			// A wait would keep the spare for its whole length.
			resp, err := ask(rootSock, `{"v":1,"verb":"wait","names":["a"],"until":"down"}`)
			if err != nil || resp.OK || !strings.Contains(resp.Error, "a request that waits cannot be served now") {
				t.Errorf("round %d: root's wait with the table full: %+v, %v; want it refused", round, resp, err)
			}
		}
	}
	testprog.WaitFor(t, 5*time.Second, "both loops' spares held again", func() bool { return devNulls(t) == spares })
}

// devNulls counts this process's descriptors open on /dev/null.
func devNulls(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l == os.DevNull {
			n++
		}
	}
	return n
}
