package control

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// ErrNotSocket is returned by Listen when something other than a socket
// (a file, a directory, a symlink) sits where the socket belongs: hinit
// replaces only a stale socket, never anything it did not make.
var ErrNotSocket = errors.New("not a socket")

// Listen creates the control socket at path with mode 0660 and group gid
// (gid < 0 keeps the group it was created with, for a non-root hinit), and
// replaces a stale socket left at path by a previous boot. The socket is
// bound under a temporary name and renamed into place, so it is never
// reachable at path with the wrong mode, and rename never follows a
// symlink. The directory must be root-owned (it is hinit's runtime dir).
// Closing the listener removes the socket file.
func Listen(path string, gid int) (*Listener, error) {
	if err := checkStale(path); err != nil {
		return nil, err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+strconv.Itoa(os.Getpid()))
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("listen %s: remove leftover %s: %w", path, tmp, err)
	}
	f, err := listenUnix(tmp, path)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	ln, err := newAcceptor(f)
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	if err := placeSocket(tmp, path, gid); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	return &Listener{acceptor: ln, path: path, st: st}, nil
}

// checkStale accepts a missing path or a socket (stale or not: a second
// hinit taking over the socket is the operator's choice) and refuses
// anything else, without following a symlink.
func checkStale(path string) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("listen %s: %w", path, err)
	case st.Mode().Type() != fs.ModeSocket:
		return fmt.Errorf("listen %s: %w: it is a %s; remove it", path, ErrNotSocket, st.Mode().Type())
	}
	return nil
}

// placeSocket gives the freshly bound socket its mode and group, then
// renames it over path.
func placeSocket(tmp, path string, gid int) error {
	if gid >= 0 {
		if err := os.Lchown(tmp, -1, gid); err != nil {
			return fmt.Errorf("chown: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o660); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

// Listener accepts connections on the control socket, and removes its
// socket file on Close unless another process has replaced it meanwhile.
type Listener struct {
	*acceptor
	path string
	st   os.FileInfo
}

// Close stops listening and removes the socket file if it is still ours.
func (l *Listener) Close() error {
	err := l.acceptor.Close()
	if st, serr := os.Lstat(l.path); serr == nil && os.SameFile(st, l.st) {
		if rerr := os.Remove(l.path); rerr != nil && err == nil {
			err = fmt.Errorf("remove %s: %w", l.path, rerr)
		}
	}
	return err
}
