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
// root's own socket beside it (RootSocketName, mode 0600: no other user can
// queue a connection in front of root's). A stale socket left at either
// path by a previous boot is replaced. The sockets are bound under
// temporary names and renamed into place, so they are never reachable with
// the wrong mode, and rename never follows a symlink. The directory must be
// root-owned (it is hinit's runtime dir). Closing the listener removes the
// socket files.
func Listen(path string, gid int) (*Listener, error) {
	main, err := listenAt(path, gid, 0o660)
	if err != nil {
		return nil, err
	}
	root, err := listenAt(filepath.Join(filepath.Dir(path), RootSocketName), -1, 0o600)
	if err != nil {
		main.close()
		return nil, err
	}
	return &Listener{socket: main, root: root}, nil
}

// listenAt creates one listening socket at path; see Listen.
func listenAt(path string, gid int, mode os.FileMode) (*socket, error) {
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
	if err := placeSocket(tmp, path, gid, mode); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	return &socket{acceptor: ln, path: path, st: st}, nil
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
func placeSocket(tmp, path string, gid int, mode os.FileMode) error {
	if gid >= 0 {
		if err := os.Lchown(tmp, -1, gid); err != nil {
			return fmt.Errorf("chown: %w", err)
		}
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

// Listener accepts connections on the control socket (Accept) and on
// root's socket, and removes both socket files on Close unless another
// process has replaced them meanwhile.
type Listener struct {
	*socket         // the control socket
	root    *socket // root's own
}

// Close stops listening on both sockets and removes those still ours.
func (l *Listener) Close() error {
	return errors.Join(l.socket.close(), l.root.close())
}

// socket is one listening socket and the file it was bound at.
type socket struct {
	*acceptor
	path string
	st   os.FileInfo
}

// close stops listening and removes the socket file if it is still ours.
func (s *socket) close() error {
	err := s.acceptor.Close()
	if st, serr := os.Lstat(s.path); serr == nil && os.SameFile(st, s.st) {
		if rerr := os.Remove(s.path); rerr != nil && err == nil {
			err = fmt.Errorf("remove %s: %w", s.path, rerr)
		}
	}
	return err
}
