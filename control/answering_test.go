package control

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Answering: a hinit listening counts, a busy one too (its queue full: a
// second hinit must not take it for gone and empty its dirs); no socket, a
// socket nobody listens on (a killed hinit's), or a file there does not.
func TestAnswering(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, SocketName)
	if Answering(dir) {
		t.Error("no socket: answering")
	}
	listen := func(backlog int) int {
		t.Helper()
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(sock)
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
			t.Fatal(err)
		}
		if backlog >= 0 {
			if err := unix.Listen(fd, backlog); err != nil {
				t.Fatal(err)
			}
		}
		return fd
	}
	fd := listen(-1) // bound, never listening: as a killed hinit leaves it
	if Answering(dir) {
		t.Error("a socket nobody listens on: answering")
	}
	unix.Close(fd)
	fd = listen(16)
	if !Answering(dir) {
		t.Error("a listening socket: not answering")
	}
	unix.Close(fd)
	fd = listen(0)
	defer unix.Close(fd)
	c, err := dialUnix(sock, dialTimeout) // fills the queue: nobody accepts
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !Answering(dir) {
		t.Error("a listening socket with its queue full: not answering")
	}
	os.Remove(sock)
	if err := os.WriteFile(sock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if Answering(dir) {
		t.Error("a plain file: answering")
	}
}
