package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// The hold helper (see TestMain) opens one connection per word of
// $CONTROL_TEST_HOLD_WHAT ("idle": sends nothing, "wait": waits on a, a
// verb: sends it), prints each answer as a JSON line and holds the rest
// until its stdin closes.
const (
	holdEnv  = "CONTROL_TEST_HOLD_SOCK"
	holdWhat = "CONTROL_TEST_HOLD_WHAT"
)

func helperHold(path string, what []string) int {
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	for i, w := range what {
		conn, err := dialUnix(path, time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		req := &Request{V: Version, Verb: w}
		switch w {
		case "idle":
			req = nil
		case VerbWait:
			req.Names, req.Until = []string{"a"}, UntilDown
		}
		if req != nil {
			b, _ := json.Marshal(req)
			conn.Write(append(b, '\n'))
		}
		go func() {
			resp, err := readResponse(conn)
			if err != nil {
				resp = Errorf(CodeFailed, "%v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			enc.Encode(map[string]any{"i": i, "code": resp.Code, "error": resp.Error})
		}()
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// holder is a running hold helper.
type holder struct {
	t       *testing.T
	answers chan holdAnswer
}

type holdAnswer struct {
	I     int
	Code  int
	Error string
}

// hold runs the hold helper as uid (member of the control group by its
// primary gid) until the test ends.
func hold(t *testing.T, bin, sock string, uid uint32, what ...string) *holder {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{holdEnv + "=" + sock, holdWhat + "=" + strings.Join(what, " ")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: testGID}}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	h := &holder{t: t, answers: make(chan holdAnswer, len(what))}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var a holdAnswer
			json.Unmarshal(sc.Bytes(), &a)
			h.answers <- a
		}
	}()
	return h
}

// next is the helper's next answer.
func (h *holder) next() holdAnswer {
	h.t.Helper()
	select {
	case a := <-h.answers:
		return a
	case <-time.After(10 * time.Second):
		h.t.Fatal("no answer from the hold helper")
	}
	return holdAnswer{}
}

// TestShares (issue 14, trial 3): one user's idle connections and waits
// take that user's share only. Its waits do not hold its request slots,
// and root, and other users, still get answers.
func TestShares(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run clients as other uids")
	}
	dir := worldDir(t)
	bin := copyTestBinary(t, dir)
	h := &fakeHandler{}
	path := startServer(t, dir, h, func(s *Server) {
		s.ReadTimeout, s.MaxPerUser, s.MaxWaitsPerUser = time.Hour, 2, 3
	})
	for i := 1; i <= 3; i++ { // one at a time: a wait holds a request slot until it is read
		hold(t, bin, path, otherUID, VerbWait)
		testprog.WaitFor(t, 10*time.Second, fmt.Sprintf("%d waits in the handler", i), func() bool { return h.waits() == i })
	}
	if a := hold(t, bin, path, otherUID, VerbWait).next(); a.Error != "hinit is busy: uid 10001 has 3 waits open (at most 3 per user): try again in a moment" {
		t.Fatalf("fourth wait: %+v", a)
	}
	idle := hold(t, bin, path, otherUID, "idle", "idle", "idle")
	if a := idle.next(); a.I != 2 || a.Error != "hinit is busy: uid 10001 has 2 requests open (at most 2 per user): try again in a moment" {
		t.Fatalf("third idle connection: %+v", a)
	}
	if a := hold(t, bin, path, otherUID, VerbStatus).next(); a.Code != CodeFailed {
		t.Fatalf("uid %d beyond its share: %+v", otherUID, a)
	}
	if a := hold(t, bin, path, otherUID+1, VerbStatus).next(); a.Code != CodeOK {
		t.Fatalf("another user: %+v", a)
	}
	for range 10 {
		start := time.Now()
		resp := do(t, path, &Request{Verb: VerbCheck})
		if !resp.OK {
			t.Fatalf("root's check: %+v", resp)
		}
		t.Logf("root's check answered in %v", time.Since(start))
	}
}

// do sends req as this process and fails the test on a talking error.
func do(t *testing.T, path string, req *Request) *Response {
	t.Helper()
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
