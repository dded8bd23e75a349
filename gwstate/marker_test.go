package gwstate

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestParseStartTime(t *testing.T) {
	// Fields after comm: state(3) ... starttime(22) at index 19.
	tail := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 23 24 25"
	tests := []struct {
		name string
		stat string
		want uint64
		err  error
	}{
		{"plain", "123 (sleep)" + tail, 424242, nil},
		{"spaces in comm", "123 (a b c)" + tail, 424242, nil},
		{"parens in comm", "123 (x) S 9 (y))" + tail, 424242, nil},
		{"empty comm", "123 ()" + tail, 424242, nil},
		{"no comm", "123 sleep S 1", 0, ErrBadStat},
		{"short", "123 (sleep) S 1 2 3", 0, ErrBadStat},
		{"not a number", "123 (sleep)" + strings.Replace(tail, "424242", "-1", 1), 0, ErrBadStat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStartTime([]byte(tc.stat))
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("= %d, %v; want %d, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// A real process whose comm holds spaces and parentheses, started after the
// test, has a start time between the test's own and now.
func TestStartTimeTrickyComm(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	exe := filepath.Join(t.TempDir(), "a) 1 2 (b")
	if err := os.Symlink(sleep, exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	comm, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm")
	if !strings.Contains(string(comm), ") 1 2 (") {
		t.Fatalf("comm = %q, test setup broken", comm)
	}
	self, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	child, err := StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if child < self || child > uptimeTicks(t)+1 {
		t.Errorf("child start %d outside [%d, now]", child, self)
	}
}

func TestWriteMarker(t *testing.T) {
	dir := hermesDir(t)
	p := filepath.Join(dir, MarkerName)
	pid := os.Getpid()
	if err := asHermes(t, func() error { return WriteMarker(p, pid, testNow) }); err != nil {
		t.Fatal(err)
	}
	start, _ := StartTime(pid)
	want := `{"target_pid":` + strconv.Itoa(pid) + `,"target_start_time":` + strconv.FormatUint(start, 10) +
		`,"stopper_pid":` + strconv.Itoa(pid) + `,"written_at":"2026-05-21T04:18:05.123456+00:00"}`
	if got := readString(t, p); got != want {
		t.Errorf("marker =\n%s\nwant\n%s", got, want)
	}
	st, _ := os.Stat(p)
	if ownerUID(st) != hermes.UID {
		t.Errorf("owner uid %d, want %d", ownerUID(st), hermes.UID)
	}
}

func TestWriteMarkerSymlinkReplaced(t *testing.T) {
	dir := hermesDir(t)
	outside := filepath.Join(filepath.Dir(dir), "outside")
	writeFile(t, outside, "untouched")
	p := filepath.Join(dir, MarkerName)
	os.Symlink(outside, p)
	if err := asHermes(t, func() error { return WriteMarker(p, os.Getpid(), testNow) }); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, outside); got != "untouched" {
		t.Errorf("symlink target written: %q", got)
	}
	if st, _ := os.Lstat(p); !st.Mode().IsRegular() {
		t.Errorf("marker is %v, want a regular file", st.Mode())
	}
}

func TestWriteMarkerNoProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true")
	}
	p := filepath.Join(t.TempDir(), MarkerName)
	if err := WriteMarker(p, cmd.Process.Pid, testNow); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want not-exist", err)
	}
	if _, err := os.Lstat(p); err == nil {
		t.Error("marker written for a process that is gone")
	}
}

func uptimeTicks(t *testing.T) uint64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	secs, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return uint64(secs*100) + 100 // CLK_TCK is 100 on Linux; one second of slack
}

func ownerUID(st os.FileInfo) int {
	return int(st.Sys().(*syscall.Stat_t).Uid)
}
