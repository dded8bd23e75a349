package control

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// otherUID is the unprivileged uid the permission tests connect as.
const otherUID = 10001

// TestPermissions runs the test binary as another uid against a real
// server and checks who gets through, as SPEC §4 says.
func TestPermissions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another uid")
	}
	dir := worldDir(t)
	bin := copyTestBinary(t, dir)
	h := &fakeHandler{}
	path := startServer(t, dir, h, nil)
	tests := []struct {
		name       string
		cred       syscall.Credential
		openSocket bool // chmod 0666 so that the server's own check is what decides
		wantErr    string
		wantCode   int
		wantMember bool
	}{
		{"stranger, socket 0660", syscall.Credential{Uid: otherUID, Gid: otherUID}, false, "permission", 0, false},
		{"stranger, open socket", syscall.Credential{Uid: otherUID, Gid: otherUID}, true, "", CodePermission, false},
		{"member by primary gid", syscall.Credential{Uid: otherUID, Gid: testGID}, false, "", CodeOK, true},
		{"member by supplementary group", syscall.Credential{Uid: otherUID, Gid: otherUID, Groups: []uint32{100, testGID}}, false, "", CodeOK, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mode := os.FileMode(0o660)
			if tc.openSocket {
				mode = 0o666
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			before := h.count()
			out := runAs(t, bin, path, tc.cred)
			if out.Err != tc.wantErr {
				t.Fatalf("client error %q, want %q", out.Err, tc.wantErr)
			}
			if tc.wantErr != "" {
				return
			}
			if out.Resp.Code != tc.wantCode {
				t.Fatalf("code %d (%s), want %d", out.Resp.Code, out.Resp.Error, tc.wantCode)
			}
			if tc.wantCode == CodePermission {
				if h.count() != before {
					t.Error("handler was called for a stranger")
				}
				want := "permission denied: uid 10001 is not in the control group"
				if !strings.HasPrefix(out.Resp.Error, want) {
					t.Errorf("error %q, want prefix %q", out.Resp.Error, want)
				}
				return
			}
			c := h.lastCaller()
			if c.UID != otherUID || c.Root || c.Member != tc.wantMember || c.PID <= 0 {
				t.Errorf("handler saw caller %+v", c)
			}
		})
	}
}

type helperOut struct {
	Err  string    `json:"err"`
	Resp *Response `json:"resp"`
}

// runAs runs the client helper of TestMain as cred and decodes its report.
func runAs(t *testing.T, bin, sock string, cred syscall.Credential) helperOut {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{helperEnv + "=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &cred}
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper as uid %d: %v", cred.Uid, err)
	}
	var out helperOut
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("helper said %q: %v", b, err)
	}
	return out
}

// worldDir is a temp dir other uids can traverse.
func worldDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "control-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyTestBinary copies the test binary where another uid can run it
// (go test builds it in a private dir).
func copyTestBinary(t *testing.T, dir string) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, "control.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// The helpers of TestGroupsAsAtConnect: handoff connects, sends a status
// request and starts answer with the connection as fd 3, then exits
// without waiting for it; answer prints the response it reads there.
const (
	handoffEnv = "CONTROL_TEST_HANDOFF_SOCK"
	answerEnv  = "CONTROL_TEST_ANSWER"
)

func helperHandoff(path string) int {
	conn, err := dialUnix(path, time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := json.Marshal(&Request{V: Version, Verb: VerbStatus})
	if _, err := conn.Write(append(b, '\n')); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command(self)
	cmd.Env = []string{answerEnv + "=1"}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{conn.f}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func helperAnswer() int {
	resp, err := readResponse(newConn(3, "handed over"))
	if err != nil {
		resp = Errorf(CodeFailed, "%v", err)
	}
	json.NewEncoder(os.Stdout).Encode(helperOut{Resp: resp})
	return 0
}

// TestGroupsAsAtConnect: a caller is a member by the supplementary groups
// it had when it connected, as its uid and gid are SO_PEERCRED's. The
// connector has exited (and been reaped) before the server looks: read
// from /proc/<pid> then, its groups were nobody's (and would have been a
// member's had a member's process been given its pid meanwhile), and a
// member by supplementary group was refused.
func TestGroupsAsAtConnect(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another uid")
	}
	dir := worldDir(t)
	bin := copyTestBinary(t, dir)
	path := filepath.Join(dir, SocketName)
	ln, err := Listen(path, testGID)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(bin)
	cmd.Env = []string{handoffEnv + "=" + path}
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID, Groups: []uint32{testGID}}}
	err = cmd.Run() // the connector is gone from here on
	w.Close()
	if err != nil {
		ln.Close()
		t.Fatalf("connector: %v", err)
	}
	h := &fakeHandler{}
	s := &Server{Handler: h, ControlGID: testGID, Log: testLog(t)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	b, err := io.ReadAll(r) // to the answerer's exit
	if err != nil {
		t.Fatal(err)
	}
	var out helperOut
	if err := json.Unmarshal(b, &out); err != nil || out.Resp == nil {
		t.Fatalf("answerer said %q: %v", b, err)
	}
	if out.Resp.Code != CodeOK {
		t.Fatalf("code %d (%s), want %d", out.Resp.Code, out.Resp.Error, CodeOK)
	}
	if c := h.lastCaller(); c.UID != otherUID || !c.Member || c.Root {
		t.Fatalf("handler saw caller %+v", c)
	}
}
