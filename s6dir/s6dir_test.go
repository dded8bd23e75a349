package s6dir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/trust"
)

// read opens dir as the scandir does and reads it.
func read(t *testing.T, dir string) (*Dir, trust.Verdict, error) {
	t.Helper()
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	unix.Fstat(dfd, &st)
	var j trust.Judge
	j.Add(dir, &st)
	d, err := Read(dfd, dir, &j)
	return d, j.Verdict(), err
}

func write(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
}

// hermesDir is what S6ServiceManager.register_profile_gateway builds,
// supervise/ skeleton and control FIFO included.
func hermesDir(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir+"/type", "longrun\n", 0o644)
	write(t, dir+"/run", "#!/bin/sh\nexec sleep 1\n", 0o755)
	write(t, dir+"/finish", "#!/bin/sh\nexit 0\n", 0o755)
	os.Mkdir(dir+"/log", 0o755)
	write(t, dir+"/log/run", "#!/bin/sh\nexec cat\n", 0o755)
	for _, d := range []string{"event", "supervise", "supervise/event", "log/supervise"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	for _, p := range []string{"supervise/control", "log/supervise/control"} {
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o660); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadHermesDir(t *testing.T) {
	dir := hermesDir(t)
	write(t, dir+"/notification-fd", "3\n", 0o644)
	write(t, dir+"/timeout-kill", "2500\n", 0o644)
	write(t, dir+"/down-signal", "SIGHUP\n", 0o644)
	done := make(chan struct{})
	var d *Dir
	var err error
	go func() { d, _, err = read(t, dir); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocked (on a FIFO of the supervise skeleton?)")
	}
	if err != nil {
		t.Fatal(err)
	}
	want := Dir{Finish: true, NotificationFD: 3, TimeoutKill: 2500 * time.Millisecond, DownSignal: "HUP", Log: true}
	if *d != want {
		t.Errorf("read %+v, want %+v", *d, want)
	}
}

func TestReadRefuses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(dir string)
		want  string // "" = ErrNotS6
	}{
		{"no run", func(dir string) { os.Remove(dir + "/run") }, ""},
		{"run not executable", func(dir string) { os.Chmod(dir+"/run", 0o644) }, ""},
		{"run a symlink", func(dir string) { os.Remove(dir + "/run"); os.Symlink("/bin/sh", dir+"/run") }, "symlink"},
		{"notification-fd a FIFO", func(dir string) { syscall.Mkfifo(dir+"/notification-fd", 0o644) }, "not a regular file"},
		{"notification-fd a symlink", func(dir string) { os.Symlink("/etc/passwd", dir+"/notification-fd") }, "notification-fd"},
		{"notification-fd not a number", func(dir string) { write(t, dir+"/notification-fd", "three", 0o644) }, "not a number"},
		{"notification-fd past 1023", func(dir string) { write(t, dir+"/notification-fd", "500000\n", 0o644) }, "not a number in 3..1023"},
		{"huge timeout-finish", func(dir string) { write(t, dir+"/timeout-finish", strings.Repeat("9", 100), 0o644) }, "not a regular file of at most"},
		{"unknown down-signal", func(dir string) { write(t, dir+"/down-signal", "SIGNOPE", 0o644) }, "unknown signal"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := hermesDir(t)
			tt.setup(dir)
			_, _, err := read(t, dir)
			switch {
			case tt.want == "" && !errors.Is(err, ErrNotS6):
				t.Errorf("err %v, want ErrNotS6", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestReadHardLinks: a control file with other hard links is read when it
// is its dir's owner's, and refused, unread, when another user's: a link
// the dir's owner made to a file root may read and the owner may not,
// whose bad value an error would quote back.
func TestReadHardLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := hermesDir(t)
	write(t, dir+"/fd", "3\n", 0o644)
	if err := os.Link(dir+"/fd", dir+"/notification-fd"); err != nil {
		t.Fatal(err)
	}
	if d, _, err := read(t, dir); err != nil || d.NotificationFD != 3 {
		t.Fatalf("the owner's own file linked twice: %+v, %v; want notification-fd 3 read", d, err)
	}
	write(t, dir+"/secret", "sk-0123456789\n", 0o600)
	if err := os.Chown(dir+"/secret", 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(dir+"/secret", dir+"/timeout-kill"); err != nil {
		t.Fatal(err)
	}
	_, _, err := read(t, dir)
	if err == nil || !strings.Contains(err.Error(), "timeout-kill: it has other hard links and another owner") || strings.Contains(err.Error(), "sk-") {
		t.Fatalf("another user's files linked in: %v; want refused unread", err)
	}
}

// A dir and files owned by the hermes user run as that user; a root dir
// whose run someone else owns is refused.
func TestReadTrust(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := hermesDir(t)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 10000, 10000) })
	_, v, err := read(t, dir)
	if err != nil || v.Root || v.UID != 10000 || v.Refused != nil {
		t.Errorf("hermes-owned dir: %+v %v, want uid 10000", v, err)
	}
	root := hermesDir(t)
	os.Chmod(root, 0o755)
	if _, v, _ := read(t, root); !v.Root {
		t.Errorf("root-owned dir: %+v, want root", v)
	}
	os.Lchown(root+"/log/run", 10000, 10000)
	if _, v, _ := read(t, root); v.Root || v.UID != 10000 {
		t.Errorf("root dir with a hermes-owned log/run: %+v, want it to run as 10000, never as root", v)
	}
}
