package hsvc

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"hinit/control"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testServices covers every state and every kind of last exit.
func testServices() []control.Status {
	ago := func(d time.Duration) time.Time { return testNow.Add(-d) }
	exit := func(code int, sig string, d time.Duration) *control.Exit {
		return &control.Exit{Code: code, Signal: sig, At: ago(d)}
	}
	return []control.Status{
		{Name: "main", State: "up", Want: "up", PID: 17, Since: ago(4*24*time.Hour + 3*time.Hour + 12*time.Minute), Ready: true, Source: "static"},
		{Name: "dashboard", State: "up", Want: "up", PID: 4242, Since: ago(3*time.Minute + 12*time.Second), UpSince: ago(3*time.Minute + 20*time.Second), Ready: true, Restarts: 2,
			LastExit: exit(143, "", 3*time.Minute), Reason: "restarted after exit 143", Source: "static", LogPath: "/var/log/dashboard/current",
			LostLines: 1234},
		{Name: "gateway-coder", State: "starting", Want: "up", PID: 5001, Since: ago(2 * time.Second), Source: "template:gateway"},
		{Name: "gateway-default", State: "up", Want: "up", PID: 5002, Since: ago(2*time.Hour + 5*time.Minute), Ready: true, Source: "template:gateway"},
		{Name: "gateway-flaky", State: "backoff", Want: "up", Since: ago(time.Second), Restarts: 7,
			LastExit: exit(1, "", time.Second), Reason: "exited 1 after 0.2s; restarting in 8s", Source: "template:gateway"},
		{Name: "gateway-broken", State: "failed", Want: "up", Since: ago(10 * time.Minute), Restarts: 10,
			LastExit: exit(137, "KILL", 10*time.Minute), Reason: "gave up: 10 restarts within 5m", Source: "template:gateway"},
		{Name: "gateway-ops", State: "exited", Want: "up", Since: ago(time.Hour), LastExit: exit(78, "", time.Hour),
			Reason: "exit 78 is in no_restart_exit_codes", Source: "template:gateway"},
		{Name: "gateway-stopped", State: "down", Want: "down", Since: ago(time.Hour), LastExit: exit(0, "", time.Hour),
			Reason: "stopped by hsvc stop", Source: "template:gateway", LostLines: 1},
		{Name: "cron", State: "down", Want: "down", Since: ago(time.Hour), Reason: "down file", Source: "scandir"},
		// Up on its last good definition: the new one in its dir is not taken.
		{Name: "worker", State: "up", Want: "up", PID: 811, Since: ago(time.Hour), Ready: true, Source: "scandir",
			NotApplied: `/run/service/worker/service.yaml:2: restart: "sometimes" is not a restart policy (always, on-failure, never)`},
		{Name: "locked", State: "stopping", Want: "down", PID: 99, Since: ago(59 * time.Second), UpSince: ago(2 * time.Hour), Source: "static"},
		// A spawn error names the command its owner chose: its bytes reach
		// root's terminal escaped.
		{Name: "evil", State: "exited", Want: "up", Since: ago(time.Minute), LastExit: exit(127, "", time.Minute),
			Reason: "exec /x\x1b]0;owned\x07\x1b[31mRED\u202e\xff\u009b2J<a&b>\x7f: no such file", Source: "scandir"},
	}
}

func TestStatusGolden(t *testing.T) {
	sock := serve(t, fixedStatus(testServices()))
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"table", []string{"status"}, "status.golden"},
		{"table of some", []string{"status", "main", "gateway-coder"}, "status-some.golden"},
		{"json", []string{"status", "--json"}, "status-json.golden"},
		{"json of one", []string{"status", "gateway-flaky", "--json"}, "status-json-one.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, stdout, stderr := newCLI(context.Background(), sock)
			if code := c.run(tc.args); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, tc.golden, stdout.String())
		})
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func TestShortDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{59*time.Second + 999*time.Millisecond, "59s"},
		{time.Minute, "1m00s"},
		{3*time.Minute + 12*time.Second, "3m12s"},
		{time.Hour - time.Second, "59m59s"},
		{2*time.Hour + 5*time.Minute + 59*time.Second, "2h05m"},
		{24*time.Hour - time.Second, "23h59m"},
		{4*24*time.Hour + 3*time.Hour + 59*time.Minute, "4d3h"},
		{400 * 24 * time.Hour, "400d0h"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := shortDuration(tc.d); got != tc.want {
				t.Fatalf("shortDuration(%v) = %s", tc.d, got)
			}
		})
	}
}

func TestLastExit(t *testing.T) {
	tests := []struct {
		name string
		e    *control.Exit
		want string
	}{
		{"none", nil, "-"},
		{"clean", &control.Exit{Code: 0}, "0"},
		{"failure", &control.Exit{Code: 1}, "1"},
		{"config error", &control.Exit{Code: 78}, "78"},
		{"shell reports TERM", &control.Exit{Code: 143}, "143 (TERM)"},
		{"killed", &control.Exit{Code: 137, Signal: "KILL"}, "SIGKILL"},
		{"out of memory", &control.Exit{Code: 137, Signal: "KILL", OOM: true}, "SIGKILL (OOM)"},
		{"pids limit", &control.Exit{Code: 2, PidsLimit: true}, "2 (pids limit)"},
		{"pids limit, aborted", &control.Exit{Code: 134, Signal: "ABRT", PidsLimit: true}, "SIGABRT (pids limit)"},
		{"realtime signal", &control.Exit{Code: 168, Signal: "40"}, "SIGRTMIN+6"},
		{"above signals", &control.Exit{Code: 255}, "255"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastExit(tc.e); got != tc.want {
				t.Fatalf("lastExit = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain: exit 1, ünïcode ok":   "plain: exit 1, ünïcode ok",
		"\x1b[2J\x1b]0;t\x07":         `\x1b[2J\x1b]0;t\x07`,
		"a\u202eb\u2066c":             `a\u202eb\u2066c`,
		"bad \xff\xfe byte, DEL \x7f": `bad \xff\xfe byte, DEL \x7f`,
		"C1 \u009b31m":                `C1 \x9b31m`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
