package hsvc

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"hinit/control"
)

// runHsvc runs hsvc's Main against the socket sock (through
// HINIT_RUNTIME_DIR) and returns its exit code, stdout and stderr.
func runHsvc(t *testing.T, sock string, args ...string) (int, string, string) {
	t.Helper()
	if sock != "" {
		t.Setenv(control.RuntimeDirEnv, filepath.Dir(sock))
	}
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// namesHinit is a hinit that knows only the given service names: status
// of all lists them, anything naming another is "no such service". It
// counts the requests it gets.
func namesHinit(t *testing.T, names ...string) (sock string, requests *atomic.Int32) {
	t.Helper()
	dir := t.TempDir()
	sock = filepath.Join(dir, control.SocketName)
	ln, err := control.Listen(sock, -1)
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int32)
	h := control.HandlerFunc(func(_ context.Context, _ control.Caller, req *control.Request) *control.Response {
		n.Add(1)
		for _, name := range req.Names {
			if !slices.Contains(names, name) {
				return control.Errorf(control.CodeNoService, "no such service: %s (hsvc list shows the services)", name)
			}
		}
		resp := control.OK()
		for _, name := range names {
			resp.Services = append(resp.Services, control.Status{Name: name, State: "down", Want: "down"})
		}
		return resp
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- control.Serve(ctx, ln, h, -1, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	return sock, n
}

// Per-verb help: the synopsis, what the verb does, and every flag with its
// description; --all says it means the gateways only, on every verb that
// has it.
func TestVerbHelp(t *testing.T) {
	for _, v := range verbs {
		code, out, errOut := runHsvc(t, "", v.name, "-h")
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: hsvc "+v.usage+"\n\n"+v.about+"\n") {
			t.Errorf("hsvc %s -h: exit %d, stderr %q, stdout %q", v.name, code, errOut, out)
		}
		for _, opt := range verbOptions(v.name) {
			if !strings.Contains(out, "\n  "+opt) {
				t.Errorf("hsvc %s -h does not describe %s:\n%s", v.name, opt, out)
			}
		}
		if strings.Contains(v.usage, "--all") && !strings.Contains(out, "--all         every gateway (each instance of the gateway template), never other services") {
			t.Errorf("hsvc %s -h does not say what --all means:\n%s", v.name, out)
		}
	}
	_, out, _ := runHsvc(t, "", "wait", "--help")
	want := "options:\n  --down         until no process runs\n  --ready        until it is up and ready\n" +
		"  --timeout DUR  give up after DUR (exit 6); default: never\n  --up           until a process runs (starting or up)\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("hsvc wait --help:\n%s\nwant it to end with\n%s", out, want)
	}
}

// A mistyped flag or verb is one line that spells the flag as --flag,
// says what is wrong with its value, and guesses what was meant.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"wait", "x", "--up", "--timeout", "1"}, `hsvc: --timeout "1": not a duration like 30s or 2m; usage: hsvc wait NAME --up|--ready|--down [--timeout DUR]` + "\n"},
		{[]string{"status", "--jsn"}, `hsvc: unknown option --jsn (did you mean --json?); usage: hsvc status [NAME...] [--json]` + "\n"},
		{[]string{"logs", "x", "-n", "ten"}, `hsvc: -n "ten": not a whole number; usage: hsvc logs NAME [-n N] [-f] [--raw]` + "\n"},
		{[]string{"logs", "x", "-n"}, `hsvc: -n needs a value; usage: hsvc logs NAME [-n N] [-f] [--raw]` + "\n"},
		{[]string{"stat"}, `hsvc: unknown verb "stat" (did you mean status?); try hsvc --help` + "\n"},
		{[]string{"stp", "x"}, `hsvc: unknown verb "stp" (did you mean stop?); try hsvc --help` + "\n"},
		{[]string{"explode"}, `hsvc: unknown verb "explode"; try hsvc --help` + "\n"},
	}
	for _, tc := range tests {
		code, out, errOut := runHsvc(t, "", tc.args...)
		if code != control.CodeUsage || out != "" || errOut != tc.err {
			t.Errorf("hsvc %q: exit %d, stdout %q, stderr\n%q\nwant 2 and\n%q", tc.args, code, out, errOut, tc.err)
		}
	}
}

// A service name that hinit does not know gets a guess from the names it
// does, from one more status request made only on that error path.
func TestDidYouMeanService(t *testing.T) {
	sock, requests := namesHinit(t, "dashboard", "gateway-x", "gateway-coder", "cron")
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"start", "dashbord"}, "hsvc: no such service: dashbord; did you mean dashboard? (hsvc list shows the services)\n"},
		{[]string{"logs", "x"}, "hsvc: no such service: x; did you mean gateway-x? (hsvc list shows the services)\n"},
		{[]string{"status", "coder"}, "hsvc: no such service: coder; did you mean gateway-coder? (hsvc list shows the services)\n"},
		{[]string{"stop", "zzz"}, "hsvc: no such service: zzz (hsvc list shows the services)\n"},
	}
	for _, tc := range tests {
		requests.Store(0)
		code, _, errOut := runHsvc(t, sock, tc.args...)
		if code != control.CodeNoService || errOut != tc.err {
			t.Errorf("hsvc %q: exit %d, stderr %q; want 3 and %q", tc.args, code, errOut, tc.err)
		}
		if n := requests.Load(); n != 2 {
			t.Errorf("hsvc %q made %d requests, want 2 (the verb, then one status)", tc.args, n)
		}
	}
	requests.Store(0)
	if code, _, _ := runHsvc(t, sock, "start", "dashboard"); code != 0 || requests.Load() != 1 {
		t.Errorf("hsvc start dashboard: exit %d after %d requests, want 0 after 1", code, requests.Load())
	}
}

// hsvc completion bash is generated from the verb table: bash completes
// verbs, a verb's options, and service names from hsvc list.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	code, script, errOut := runHsvc(t, "", "completion", "bash")
	if code != 0 || errOut != "" {
		t.Fatalf("hsvc completion bash: exit %d, %q", code, errOut)
	}
	// A stand-in hsvc on PATH answers the completion's `hsvc list`.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hsvc"), []byte("#!/bin/sh\nprintf 'dashboard\\ngateway-coder\\n'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) string {
		t.Helper()
		prog := script + `
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hsvc; echo "${COMPREPLY[*]}"`
		cmd := exec.Command(bash, append([]string{"--norc", "-c", prog, "bash"}, words...)...)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("complete %q: %v", words, err)
		}
		return strings.TrimSpace(string(out))
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"hsvc", "st"}, "status start stop"},
		{[]string{"hsvc", "comp"}, "completion"},
		{[]string{"hsvc", "wait", "dash", "--re"}, "--ready"},
		{[]string{"hsvc", "logs", "-"}, "-f -n --raw --help"},
		{[]string{"hsvc", "stop", "gat"}, "gateway-coder"},
		{[]string{"hsvc", "signal", "HU"}, "HUP"},
		{[]string{"hsvc", "list", "x"}, ""},
	} {
		if got := complete(tc.words...); got != tc.want {
			t.Errorf("complete %q = %q, want %q", tc.words, got, tc.want)
		}
	}
	for _, v := range verbs {
		if !strings.Contains(script, "\t"+v.name+") opts=") {
			t.Errorf("the completion lacks verb %s", v.name)
		}
	}
}
