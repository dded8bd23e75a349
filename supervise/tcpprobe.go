package supervise

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"hinit/config"
)

// The tcp readiness probe connects with raw sockets rather than package
// net, which hinit does not link (control/sock_linux.go says why). The
// probe checks a service in this container, so its host is an IP address,
// empty (the loopback address) or a name in /etc/hosts (localhost, the
// container's hostname): hinit never asks DNS.

// hostsFile is where probe host names are looked up; tests replace it.
var hostsFile = "/etc/hosts"

// probeAddr resolves the address of a tcp readiness probe.
func probeAddr(addr string) (netip.AddrPort, error) {
	host, port, err := config.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("ready.tcp %q: %w", addr, err)
	}
	if host == "" {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port), nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		if ip, err = lookupHosts(host); err != nil {
			return netip.AddrPort{}, fmt.Errorf("ready.tcp %q: %w", addr, err)
		}
	}
	return netip.AddrPortFrom(ip.Unmap(), port), nil
}

// lookupHosts finds name in the hosts file, preferring an IPv4 address.
func lookupHosts(name string) (netip.Addr, error) {
	notFound := fmt.Errorf("host %q is not an IP address and not in %s (hinit does not use DNS)", name, hostsFile)
	f, err := os.Open(hostsFile)
	if err != nil {
		if name == "localhost" {
			return netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
		}
		return netip.Addr{}, notFound
	}
	defer f.Close()
	var found netip.Addr
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(fields[0])
		if err != nil {
			continue
		}
		for _, n := range fields[1:] {
			if strings.EqualFold(n, name) && (!found.IsValid() || found.Is6() && ip.Unmap().Is4()) {
				found = ip.Unmap()
			}
		}
	}
	if !found.IsValid() && name == "localhost" {
		found = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	if !found.IsValid() {
		return netip.Addr{}, notFound
	}
	return found, nil
}

// dialTCP reports whether ap accepts a connection within timeout (or until
// ctx ends), and closes that connection at once.
func dialTCP(ctx context.Context, ap netip.AddrPort, timeout time.Duration) error {
	var family int
	var sa unix.Sockaddr
	if ip := ap.Addr(); ip.Is4() {
		family, sa = unix.AF_INET, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ip.As4()}
	} else {
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	err = unix.Connect(fd, sa)
	if !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return connectErr(err)
	}
	// In progress, as a non-blocking TCP connect usually is: wait for
	// writability in the runtime's poller, as net does, then read the
	// outcome from SO_ERROR.
	f := os.NewFile(uintptr(fd), "ready probe")
	defer f.Close()
	f.SetWriteDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	err = raw.Write(func(fd uintptr) bool {
		v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		switch {
		case err != nil:
			cerr = err
		case v == 0:
			// The poller may wake us early: connected only once there is a peer.
			if _, err := unix.Getpeername(int(fd)); err != nil {
				return false
			}
			cerr = nil
		case unix.Errno(v) == unix.EINPROGRESS || unix.Errno(v) == unix.EALREADY:
			return false
		default:
			cerr = unix.Errno(v)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return connectErr(cerr)
}

func connectErr(err error) error {
	if err == nil {
		return nil
	}
	return os.NewSyscallError("connect", err)
}
