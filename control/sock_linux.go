package control

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The control socket is a unix stream socket held in an *os.File: the
// runtime's poller gives its accepts, reads and writes the same wake-ups
// and deadlines that package net would, without linking net into hinit
// (its resolver, TCP and IP code are 0.3 MB of PID 1's binary and
// memory that hinit never uses; docs/decisions.md).

// listenBacklog is the accept queue asked for; the kernel caps it at
// net.core.somaxconn.
const listenBacklog = 4096

// Conn is one connection on the control socket, accepted or dialed.
type Conn struct {
	f *os.File
}

func newConn(fd int, name string) *Conn {
	return &Conn{f: os.NewFile(uintptr(fd), name)}
}

// Read reads from the connection; io.EOF when the peer has closed it, an
// error matching os.ErrDeadlineExceeded when the read deadline passed.
func (c *Conn) Read(p []byte) (int, error) { return c.f.Read(p) }

// Write writes all of p, or fails (os.ErrDeadlineExceeded past the write
// deadline).
func (c *Conn) Write(p []byte) (int, error) { return c.f.Write(p) }

// Close closes the connection; a Read or Write blocked on it returns.
func (c *Conn) Close() error { return c.f.Close() }

// SetDeadline sets the read and write deadlines; the zero time clears them.
func (c *Conn) SetDeadline(t time.Time) error { return c.f.SetDeadline(t) }

// SetReadDeadline sets the read deadline; the zero time clears it.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.f.SetReadDeadline(t) }

// SetWriteDeadline sets the write deadline; the zero time clears it.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.f.SetWriteDeadline(t) }

// peerCred reads the uid, gid and pid of the process at the other end
// (SO_PEERCRED), as they were when it connected.
func (c *Conn) peerCred() (*unix.Ucred, error) {
	var cred *unix.Ucred
	err := c.sockopt(func(fd int) (err error) {
		cred, err = unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("peer credentials: %w", err)
	}
	return cred, nil
}

// peerGroups reads the supplementary groups of the process at the other
// end as they were when it connected (SO_PEERGROUPS), as SO_PEERCRED gives
// its uid and gid: what runs under its pid now does not count (it may have
// exited and its pid gone to a member of the control group, or sit in a
// PID namespace or behind a /proc that hides it). A kernel without
// SO_PEERGROUPS (before Linux 4.13) has them read from /proc/<pid>/status
// instead, now.
func (c *Conn) peerGroups(pid int) ([]int, error) {
	var groups []int
	err := c.sockopt(func(fd int) (err error) {
		groups, err = getPeerGroups(fd)
		return err
	})
	if errors.Is(err, unix.ENOPROTOOPT) {
		return procGroups(pid)
	}
	if err != nil {
		return nil, fmt.Errorf("peer groups: %w", err)
	}
	return groups, nil
}

// sockopt runs get with the connection's descriptor, for a getsockopt.
func (c *Conn) sockopt(get func(fd int) error) error {
	raw, err := c.f.SyscallConn()
	if err != nil {
		return err
	}
	var getErr error
	if err := raw.Control(func(fd uintptr) { getErr = get(int(fd)) }); err != nil {
		return err
	}
	return getErr
}

// getPeerGroups is getsockopt(SO_PEERGROUPS): a buffer too small is
// answered ERANGE with the size needed (at most NGROUPS_MAX gids).
func getPeerGroups(fd int) ([]int, error) {
	buf := make([]uint32, 32)
	for {
		n := uint32(4 * len(buf))
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERGROUPS,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
		if e == unix.ERANGE && int(n/4) > len(buf) {
			buf = make([]uint32, n/4)
			continue
		}
		if e != 0 {
			return nil, e
		}
		groups := make([]int, n/4)
		for i := range groups {
			groups[i] = int(buf[i])
		}
		return groups, nil
	}
}

// listenUnix binds a listening socket at path (which must not exist); name
// is what its errors call it.
func listenUnix(path, name string) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	if err := unix.Listen(fd, listenBacklog); err != nil {
		unix.Close(fd)
		os.Remove(path)
		return nil, os.NewSyscallError("listen", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// acceptor waits for and accepts connections on a listening socket.
type acceptor struct {
	f      *os.File
	raw    syscall.RawConn
	closed atomic.Bool
}

func newAcceptor(f *os.File) (*acceptor, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &acceptor{f: f, raw: raw}, nil
}

// Accept waits for the next connection. After Close it returns an error
// matching os.ErrClosed. With the descriptor table full (EMFILE, ENFILE)
// it returns that error only when a connection is queued: accept(2) takes
// a descriptor before it looks at the queue, and an idle loop would
// otherwise see EMFILE at once, not wait.
func (a *acceptor) Accept() (*Conn, error) { return a.accept(true) }

// acceptNow is one attempt, with no wait: EAGAIN when none is queued.
func (a *acceptor) acceptNow() (*Conn, error) { return a.accept(false) }

func (a *acceptor) accept(wait bool) (*Conn, error) {
	var nfd int
	var aerr error
	err := a.raw.Read(func(fd uintptr) bool {
		for {
			nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			// EINTR, ECONNABORTED: this attempt only; EAGAIN: wait for the poller.
			if aerr == unix.EINTR || aerr == unix.ECONNABORTED {
				continue
			}
			if !wait {
				return true
			}
			if outOfDescriptors(aerr) && !queued(int(fd)) {
				return false // nothing to take: wait for a connection
			}
			return aerr != unix.EAGAIN
		}
	})
	switch {
	case a.closed.Load():
		if aerr == nil && err == nil {
			unix.Close(nfd)
		}
		return nil, fmt.Errorf("accept: %w", os.ErrClosed)
	case err != nil:
		return nil, fmt.Errorf("accept: %w", err)
	case aerr != nil:
		return nil, os.NewSyscallError("accept", aerr)
	}
	return newConn(nfd, a.f.Name()), nil
}

// queued reports whether the listening socket fd has a connection to accept.
func queued(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, 0)
	return err != nil || (n == 1 && p[0].Revents != 0) // when it cannot be told: as before
}

// Close stops accepting; a blocked Accept returns.
func (a *acceptor) Close() error {
	a.closed.Store(true)
	return a.f.Close()
}

// dialUnix connects to the socket at path. connect(2) blocks only while the
// listener's accept queue is full; timeout bounds that wait (SO_SNDTIMEO
// applies to a unix stream connect), after which it fails with EAGAIN.
func dialUnix(path string, timeout time.Duration) (*Conn, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("setsockopt", err)
	}
	for {
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err == nil {
		err = unix.SetNonblock(fd, true) // so that the poller takes it
	}
	if err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	return newConn(fd, path), nil
}

// peerGone reports whether the peer has closed its end for good, as
// opposed to only shutting down its writes (shutdown(SHUT_WR), a
// `nc -N`), after which it still reads the answer: poll(2) says POLLHUP
// only for the first.
func (c *Conn) peerGone() bool {
	gone := true // when it cannot be told: as before, a hang-up
	c.sockopt(func(fd int) error {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		if n, err := unix.Poll(p, 0); err == nil && n == 1 {
			gone = p[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
		}
		return nil
	})
	return gone
}
