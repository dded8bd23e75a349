package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzHandleRequest feeds arbitrary bytes through the server's framing,
// decoding, validation and dispatch: nothing may panic, every answer is a
// consistent one-line response, the handler only ever sees valid requests
// from permitted callers.
func FuzzHandleRequest(f *testing.F) {
	for _, seed := range []string{
		`{"v":1,"verb":"status"}`,
		`{"v":1,"verb":"start","names":["gateway-coder"],"wait":"5s"}`,
		`{"v":1,"verb":"stop","all":true}`,
		`{"v":1,"verb":"signal","names":["dashboard"],"signal":"HUP"}`,
		`{"v":1,"verb":"register","template":"gateway","instance":"coder","down":true,"env":{"A":"b"}}`,
		`{"v":1,"verb":"wait","names":["x"],"until":"ready","wait":"1m"}`,
		`{"v":1,"verb":"shutdown","exit_code":3}`,
		`{"v":1,"verb":"list","prefix":"gateway-"}`,
		`{"v":1,"verb":"check"}` + "\n" + `trailing`,
		`{"v":1,"verb":"unregister","names":["a"],"wait":"1h"}`,
		`{"v":"1"}`, `[]`, `"x"`, "\xff\xfe", `{"v":1,"verb":"start","names":[""]}`,
		`{"v":1,"verb":"shutdown","exit_code":-1}`, `{"v":1e400}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := HandlerFunc(func(_ context.Context, c Caller, req *Request) *Response {
			if err := req.Validate(); err != nil {
				t.Errorf("handler got an invalid request: %v", err)
			}
			if !c.Root && !c.Member {
				t.Errorf("handler called for %+v", c)
			}
			return &Response{OK: req.Verb != VerbCheck, Error: "a\nb"}
		})
		s := &Server{Handler: h, ControlGID: testGID}
		s.setDefaults()
		line, _, err := readRequest(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		for _, c := range []Caller{{UID: 10000, Member: true}, {UID: 10001}} {
			req, resp := s.decode(c, line)
			if resp == nil {
				resp = s.handle(context.Background(), c, req)
			}
			checkResponse(t, resp)
			if !c.Member && resp.Code != CodePermission {
				t.Fatalf("stranger got code %d", resp.Code)
			}
		}
	})
}

// checkResponse asserts the invariants of every response on the wire.
func checkResponse(t *testing.T, resp *Response) {
	t.Helper()
	if resp == nil || resp.V != Version || resp.OK != (resp.Code == CodeOK) {
		t.Fatalf("inconsistent response %+v", resp)
	}
	if !resp.OK && resp.Error == "" || strings.ContainsAny(resp.Error, "\r\n") {
		t.Fatalf("error must be one non-empty line: %q", resp.Error)
	}
	b, err := json.Marshal(resp)
	if err != nil || bytes.Contains(b, []byte("\n")) {
		t.Fatalf("response does not encode to one line: %v", err)
	}
}
