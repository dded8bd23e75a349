package hsvc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
	mt "hinit/manager/managertest"
)

// testConfig is the hinit.yaml of the verb tests: steady services, one
// that catches signals, one registered down, one never ready, one
// protected, and the gateway template.
func testConfig() string {
	sleep := "command: " + mt.Prog("sleep", "inf") + "\n    " + mt.Env
	return `templates:
  gateway:
    ` + sleep + `services:
  main:
    ` + sleep + `  dashboard:
    ` + sleep + `  catcher:
    command: ` + mt.Prog("signals") + `
    ` + mt.Env + `  cron:
    enabled: "false"
    ` + sleep + `  slow:
    ready: {delay: 1h}
    ` + sleep + `  locked:
    protected: true
    ` + sleep
}

// TestExitCodes runs every verb against a real manager, as root, and
// checks the exit code, stdout, and that an error is one "hsvc: " line.
func TestExitCodes(t *testing.T) {
	f := realHinit(t, testConfig(), asCaller(true))
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "ops"}, 0, "")
	sock := f.Sock
	tests := []struct {
		name    string
		args    []string
		code    int
		out     string // stdout must contain it
		errPart string // stderr must contain it
	}{
		{"no verb", nil, 2, "", "try hsvc --help"},
		{"unknown verb", []string{"explode"}, 2, "", `unknown verb "explode"`},
		{"help", []string{"--help"}, 0, "hsvc wait NAME --up|--ready|--down", ""},
		{"version", []string{"--version"}, 0, "hsvc dev (control protocol 1)", ""},
		{"verb help", []string{"start", "--help"}, 0, "usage: hsvc start NAME... | --all", ""},

		{"status", []string{"status"}, 0, "gateway-ops", ""},
		{"status unknown", []string{"status", "nope"}, 3, "", "no such service: nope"},
		{"status bad name", []string{"status", "Nope"}, 2, "", `"Nope" is not a valid service name`},
		{"status bad flag", []string{"status", "--jsn"}, 2, "", "unknown option --jsn (did you mean --json?); usage: hsvc status"},

		{"start", []string{"start", "dashboard"}, 0, "", ""},
		{"start wait", []string{"start", "dashboard", "--wait=5s"}, 0, "", ""},
		{"start all", []string{"start", "--all", "--wait"}, 0, "", ""},
		{"start nothing", []string{"start"}, 2, "", "no service name given"},
		{"start both", []string{"start", "--all", "main"}, 2, "", "not both"},
		{"start bad wait", []string{"start", "main", "--wait=soon"}, 2, "", `--wait "soon": not a duration like 30s or 2m`},
		{"start wait with space", []string{"start", "main", "--wait", "30s"}, 0, "", ""},
		{"start unknown", []string{"start", "nope"}, 3, "", "no such service"},
		{"restart", []string{"restart", "main", "dashboard"}, 0, "", ""},

		{"signal", []string{"signal", "HUP", "catcher"}, 0, "", ""},
		{"signal number", []string{"signal", "10", "catcher"}, 0, "", ""},
		{"signal unknown", []string{"signal", "NOPE", "dashboard"}, 2, "", "unknown signal"},
		{"signal no name", []string{"signal", "HUP"}, 2, "", "want a signal and one service name"},
		{"signal as kill writes it", []string{"signal", "-HUP", "catcher"}, 0, "", ""},
		{"completion without a shell", []string{"completion"}, 2, "", "name the shell: hsvc completion bash"},
		{"completion of zsh", []string{"completion", "zsh"}, 2, "", "only bash is supported"},
		{"signal unknown service", []string{"signal", "HUP", "nope"}, 3, "", "no such service"},

		{"register", []string{"register", "gateway", "coder", "--down", "--env", "A=1"}, 0, "", ""},
		{"register bad env", []string{"register", "gateway", "coder", "--env", "A"}, 2, "", `--env "A": not K=V`},
		// JSON would have sent U+FFFD: another value than the one asked
		{"register env not UTF-8", []string{"register", "gateway", "coder", "--env", "A=\xff\xfe"}, 2, "", `environment variable "A": its value is not valid UTF-8`},
		{"register env name not UTF-8", []string{"register", "gateway", "coder", "--env", "K\xff=v"}, 2, "", `environment variable "K\xff": its name is not valid UTF-8`},
		{"register bad instance", []string{"register", "gateway", "Coder"}, 2, "", `"Coder" is not a valid instance name`},
		{"register dotted instance", []string{"register", "gateway", "a.b"}, 2, "",
			`register: "a.b" is not a valid instance name (expected ^[a-z0-9][a-z0-9_-]*$ (no dot), at most 64 bytes)`},
		{"register one word", []string{"register", "gateway"}, 2, "", "want a template and an instance"},
		{"register unknown template", []string{"register", "nope", "x"}, 2, "", `no template "nope"`},

		{"unregister", []string{"unregister", "gateway-ops", "--wait"}, 0, "", ""},
		{"unregister two", []string{"unregister", "a", "b"}, 2, "", "exactly one"},

		{"list", []string{"list"}, 0, "cron\ndashboard\n", ""},
		{"list prefix", []string{"list", "--prefix", "gateway-"}, 0, "gateway-coder\n", ""},
		{"list operand", []string{"list", "x"}, 2, "", `unexpected "x"`},

		{"wait", []string{"wait", "main", "--ready"}, 0, "", ""},
		{"wait two targets", []string{"wait", "main", "--up", "--down"}, 2, "", "exactly one of --up, --ready, --down"},
		{"wait no target", []string{"wait", "main"}, 2, "", "exactly one of"},
		{"wait times out", []string{"wait", "slow", "--ready", "--timeout", "10ms"}, 6, "", "timed out"},
		{"wait negative", []string{"wait", "main", "--up", "--timeout=-1s"}, 2, "", "must not be negative"},

		{"logs no log file", []string{"logs", "main"}, 1, "", "main has no log file"},
		{"logs unknown", []string{"logs", "nope"}, 3, "", "no such service"},
		{"logs bad n", []string{"logs", "main", "-n", "x"}, 2, "", `-n "x": not a whole number`},

		{"check", []string{"check"}, 0, "", ""},
		{"shutdown", []string{"shutdown", "--exit-code", "3"}, 0, "", ""},
		{"shutdown bad code", []string{"shutdown", "--exit-code", "256"}, 2, "", "not in 0..255"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, stdout, stderr := newCLI(context.Background(), sock)
			code := c.run(tc.args)
			checkRun(t, code, stdout.String(), stderr.String(), tc.code, tc.out, tc.errPart)
		})
	}
}

// checkRun asserts an exit code, output and hsvc's one-line error rule.
func checkRun(t *testing.T, code int, stdout, stderr string, wantCode int, out, errPart string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("exit %d, want %d; stderr %q", code, wantCode, stderr)
	}
	if !strings.Contains(stdout, out) {
		t.Errorf("stdout %q does not contain %q", stdout, out)
	}
	if wantCode == 0 {
		if stderr != "" {
			t.Errorf("stderr %q on success", stderr)
		}
		return
	}
	if !strings.HasPrefix(stderr, "hsvc: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr is not one hsvc: line: %q", stderr)
	}
	if !strings.Contains(stderr, errPart) {
		t.Errorf("stderr %q does not contain %q", stderr, errPart)
	}
}

func TestCheckFails(t *testing.T) {
	f := realHinit(t, "services:\n  dashboard:\n    command: "+mt.Prog("exit", "1")+"\n    restart: never\n    essential: true\n    "+mt.Env, nil)
	testprog.WaitFor(t, 5*time.Second, "dashboard exited", func() bool { return f.State("dashboard") == "exited" })
	c, stdout, stderr := newCLI(context.Background(), f.Sock)
	checkRun(t, c.run([]string{"check"}), stdout.String(), stderr.String(), 1, "", "essential service dashboard is exited: exit 1")
	if got := f.Shutdowns(); len(got) != 1 || got[0] != 1 {
		t.Errorf("shutdowns requested: %v, want [1]", got)
	}
}

// A member of the control group may not change a protected service, nor
// shut the container down.
func TestMemberRights(t *testing.T) {
	f := realHinit(t, testConfig(), asCaller(false))
	for _, tc := range []struct {
		args    []string
		code    int
		errPart string
	}{
		{[]string{"stop", "locked"}, 4, "permission denied: locked is a protected service"},
		{[]string{"status", "locked"}, 0, ""},
		{[]string{"shutdown"}, 4, "only root"},
		{[]string{"stop", "dashboard", "--wait"}, 0, ""},
	} {
		c, stdout, stderr := newCLI(context.Background(), f.Sock)
		checkRun(t, c.run(tc.args), stdout.String(), stderr.String(), tc.code, "", tc.errPart)
	}
	if got := f.Shutdowns(); len(got) != 0 {
		t.Errorf("a member's shutdown went through: %v", got)
	}
}

func TestUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), control.SocketName)
	c, stdout, stderr := newCLI(context.Background(), sock)
	checkRun(t, c.run([]string{"status"}), stdout.String(), stderr.String(), 5,
		"", "hinit is not reachable at "+sock+": is hinit running as PID 1 of this container?")
}

// TestRequests checks what each verb puts on the wire.
func TestRequests(t *testing.T) {
	h := &recorder{}
	sock := realHinit(t, testConfig(), h.wrap).Sock
	three := 3
	tests := []struct {
		args []string
		want control.Request
	}{
		{[]string{"status", "main", "cron"}, control.Request{Verb: "status", Names: []string{"main", "cron"}}},
		{[]string{"start", "main", "--wait"}, control.Request{Verb: "start", Names: []string{"main"}, Wait: "1m0s"}},
		{[]string{"stop", "--all", "--wait=90s"}, control.Request{Verb: "stop", All: true, Wait: "1m30s"}},
		{[]string{"stop", "--wait", "90s", "main"}, control.Request{Verb: "stop", Names: []string{"main"}, Wait: "1m30s"}},
		{[]string{"stop", "main", "--wait", "--", "cron"}, control.Request{Verb: "stop", Names: []string{"main", "cron"}, Wait: "1m0s"}},
		{[]string{"restart", "main"}, control.Request{Verb: "restart", Names: []string{"main"}}},
		{[]string{"signal", "sigusr1", "main"}, control.Request{Verb: "signal", Names: []string{"main"}, Signal: "USR1"}},
		{[]string{"signal", "--process", "USR1", "main"}, control.Request{Verb: "signal", Names: []string{"main"}, Signal: "USR1", Process: true}},
		// kill(1)'s spelling: it said "unknown option -9".
		{[]string{"signal", "-9", "main"}, control.Request{Verb: "signal", Names: []string{"main"}, Signal: "KILL"}},
		{[]string{"signal", "--process", "-SIGHUP", "main"}, control.Request{Verb: "signal", Names: []string{"main"}, Signal: "HUP", Process: true}},
		{[]string{"register", "--env", "A=1", "gateway", "coder", "--env=B=x=y", "--down"},
			control.Request{Verb: "register", Template: "gateway", Instance: "coder", Down: true, Env: map[string]string{"A": "1", "B": "x=y"}}},
		{[]string{"unregister", "cron"}, control.Request{Verb: "unregister", Names: []string{"cron"}}},
		{[]string{"list", "--prefix=gateway-"}, control.Request{Verb: "list", Prefix: "gateway-"}},
		{[]string{"wait", "cron", "--down", "--timeout", "2m"}, control.Request{Verb: "wait", Names: []string{"cron"}, Until: "down", Wait: "2m0s"}},
		{[]string{"wait", "main", "--ready"}, control.Request{Verb: "wait", Names: []string{"main"}, Until: "ready"}},
		{[]string{"check"}, control.Request{Verb: "check"}},
		{[]string{"shutdown"}, control.Request{Verb: "shutdown"}},
		{[]string{"shutdown", "--exit-code=3"}, control.Request{Verb: "shutdown", ExitCode: &three}},
		{[]string{"logs", "dashboard", "-n", "0"}, control.Request{Verb: "status", Names: []string{"dashboard"}}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, _, stderr := newCLI(context.Background(), sock)
			before := h.count()
			c.run(tc.args)
			if h.count() == before {
				t.Fatalf("no request sent; stderr %q", stderr)
			}
			got := h.last()
			tc.want.V = control.Version
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("sent %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// hsvc check asks again after a "busy" answer (its user's share full of
// hermes' own calls, as a probe of the restricted variant runs as hermes),
// and passes on any other answer at once: a busy share failed the probe.
func TestCheckRetriesBusy(t *testing.T) {
	var asked atomic.Int32
	sock := serve(t, control.HandlerFunc(func(_ context.Context, _ control.Caller, req *control.Request) *control.Response {
		switch n := asked.Add(1); {
		case n <= 2:
			return &control.Response{Code: control.CodeFailed, Error: "hinit is busy", Busy: true}
		case n == 3:
			return control.OK()
		}
		return control.Errorf(control.CodeFailed, "gateway failing")
	}))
	for _, want := range []int{0, 1} {
		c, _, stderr := newCLI(context.Background(), sock)
		if code := c.run([]string{"check"}); code != want {
			t.Errorf("check, asked %d times: exit %d (%s), want %d", asked.Load(), code, stderr, want)
		}
	}
	if n := asked.Load(); n != 4 {
		t.Errorf("asked %d times, want 4 (two busy, one ok, one failure not asked again)", n)
	}
}

// list whose output cannot be written fails with the error, as status
// does: hermes counts its gateways from `hsvc list --prefix gateway-`, and
// an empty answer with exit 0 reads as none. It exited 0.
func TestOutputWriteFails(t *testing.T) {
	sock := serve(t, control.HandlerFunc(func(context.Context, control.Caller, *control.Request) *control.Response {
		r := control.OK()
		r.Names = []string{"gateway-coder"}
		return r
	}))
	c, _, stderr := newCLI(context.Background(), sock)
	c.stdout = failingWriter{}
	if code := c.run([]string{"list"}); code != 1 || !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("list into a full disk: exit %d, stderr %q; want 1 and the error", code, stderr.String())
	}
}

// failingWriter fails every write, as /dev/full does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// Root refused by the socket: hinit runs as another user (docker run
// --user) and root has no CAP_DAC_OVERRIDE (--cap-drop ALL). Told to run
// as root, which it is, it could do nothing with that; it is told whom to
// run as. hsvc runs itself again under setpriv without the capability.
func TestPermissionDeniedToRootWithoutCaps(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if os.Getenv("HSVC_TEST_AS_CLI") == "1" {
		os.Exit(Main([]string{"status"}, os.Stdout, os.Stderr))
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	sock := serve(t, control.HandlerFunc(func(context.Context, control.Caller, *control.Request) *control.Response { return control.OK() }))
	for _, p := range []string{sock, filepath.Join(filepath.Dir(sock), control.RootSocketName)} { // as a hinit run as 10000 leaves them
		if err := os.Chown(p, 10000, 10000); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o660); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps", "-dac_override,-dac_read_search",
		os.Args[0], "-test.run", "^TestPermissionDeniedToRootWithoutCaps$")
	cmd.Env = append(os.Environ(), "HSVC_TEST_AS_CLI=1", control.RuntimeDirEnv+"="+filepath.Dir(sock))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	want := "root has no CAP_DAC_OVERRIDE here; run hsvc as its owner or a member of group"
	if !errors.As(err, &ee) || ee.ExitCode() != control.CodePermission || !strings.Contains(string(out), want) {
		t.Errorf("hsvc as root without CAP_DAC_OVERRIDE: %v %q\nwant exit %d and %q", err, out, control.CodePermission, want)
	}
}
