package control

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestListen(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string)
		wantErr error
	}{
		{"fresh", func(*testing.T, string) {}, nil},
		{"stale socket", staleSocket, nil},
		{"regular file", func(t *testing.T, path string) {
			writeFile(t, path, "keep me")
		}, ErrNotSocket},
		{"symlink to a file", func(t *testing.T, path string) {
			target := filepath.Join(filepath.Dir(path), "target")
			writeFile(t, target, "keep me")
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, ErrNotSocket},
		{"symlink to a socket", func(t *testing.T, path string) {
			target := filepath.Join(filepath.Dir(path), "other.sock")
			staleSocket(t, target)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, ErrNotSocket},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, ErrNotSocket},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), SocketName)
			tc.setup(t, path)
			before, _ := os.Lstat(path)
			ln, err := Listen(path, testGID)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Listen: %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				after, _ := os.Lstat(path)
				if !os.SameFile(before, after) {
					t.Fatal("Listen replaced something that was not a socket")
				}
				return
			}
			checkSocket(t, path, testGID)
			rootPath := filepath.Join(filepath.Dir(path), RootSocketName)
			if st, err := os.Lstat(rootPath); err != nil || st.Mode().Type() != fs.ModeSocket || st.Mode().Perm() != 0o600 {
				t.Errorf("root's socket: %v %v, want a socket 0600", st.Mode(), err)
			}
			if err := ln.Close(); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{path, rootPath} {
				if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("socket %s left after Close: %v", p, err)
				}
			}
		})
	}
}

// checkSocket asserts path is a socket with mode 0660 and group gid.
func checkSocket(t *testing.T, path string, gid int) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Type() != fs.ModeSocket || st.Mode().Perm() != 0o660 {
		t.Errorf("mode %v, want socket 0660", st.Mode())
	}
	if g := int(st.Sys().(*syscall.Stat_t).Gid); g != gid {
		t.Errorf("group %d, want %d", g, gid)
	}
}

// staleSocket leaves a socket file at path that nobody listens on.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCloseKeepsReplacement: closing a listener whose socket another
// server has since replaced leaves the newer socket alone.
func TestCloseKeepsReplacement(t *testing.T) {
	path := filepath.Join(t.TempDir(), SocketName)
	old, err := Listen(path, -1)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Listen(path, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	old.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the newer socket is gone: %v", err)
	}
}
