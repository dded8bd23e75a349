package supervise

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/config"
)

func TestProbeAddr(t *testing.T) {
	hosts := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hosts, []byte("# comment\n::1 ip6-localhost dual\n127.0.0.1\tlocalhost\n10.1.2.3 box box.local # the container\n192.0.2.7 dual\n"), 0o644)
	defer func(old string) { hostsFile = old }(hostsFile)
	hostsFile = hosts
	for _, tt := range []struct{ in, want, err string }{
		{in: "127.0.0.1:9119", want: "127.0.0.1:9119"},
		{in: ":80", want: "127.0.0.1:80"},
		{in: "[::1]:443", want: "[::1]:443"},
		{in: "[::ffff:127.0.0.1]:1", want: "127.0.0.1:1"},
		{in: "0.0.0.0:9119", want: "0.0.0.0:9119"},
		{in: "localhost:8080", want: "127.0.0.1:8080"},
		{in: "BOX.local:1", want: "10.1.2.3:1"},
		{in: "dual:2", want: "192.0.2.7:2"}, // IPv4 preferred
		{in: "ip6-localhost:3", want: "[::1]:3"},
		{in: "example.com:80", err: `ready.tcp "example.com:80": host "example.com" is not an IP address and not in ` + hosts + ` (hinit does not use DNS)`},
		{in: "localhost", err: `ready.tcp "localhost": missing port`},
		{in: "::1:80", err: `ready.tcp "::1:80": an IPv6 address needs brackets: [::1]:9119`},
		{in: "[::1:80", err: `ready.tcp "[::1:80": missing ] after an IPv6 address`},
		{in: "h:0", err: `ready.tcp "h:0": port "0" is not a number in 1..65535`},
		{in: "h:65536", err: `ready.tcp "h:65536": port "65536" is not a number in 1..65535`},
	} {
		got, err := probeAddr(tt.in)
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("probeAddr(%q) = %v, %v; want error %s", tt.in, got, err, tt.err)
		case tt.err == "" && (err != nil || got.String() != tt.want):
			t.Errorf("probeAddr(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	hostsFile = filepath.Join(t.TempDir(), "missing")
	if got, err := probeAddr("localhost:1"); err != nil || got.String() != "127.0.0.1:1" {
		t.Errorf("localhost without a hosts file: %v, %v", got, err)
	}
}

// TestDialTCP: a listening port answers, a closed one is refused at once,
// on IPv4 and IPv6 loopback.
func TestDialTCP(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		ln, err := net.Listen(network, map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}[network])
		if err != nil {
			t.Logf("%s: %v (no such loopback here)", network, err)
			continue
		}
		ap := netip.MustParseAddrPort(ln.Addr().String())
		if err := dialTCP(context.Background(), ap, time.Second); err != nil {
			t.Errorf("%s: dial a listening port: %v", network, err)
		}
		ln.Close()
		start := time.Now()
		err = dialTCP(context.Background(), ap, 5*time.Second)
		if !errors.Is(err, unix.ECONNREFUSED) {
			t.Errorf("%s: dial a closed port: %v, want ECONNREFUSED", network, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: refusal took %v", network, d)
		}
	}
}

// TestReadinessUnresolvableHost: a probe address hinit cannot resolve is a
// failed start with the reason, not a service starting for ever.
func TestReadinessUnresolvableHost(t *testing.T) {
	f := newFixture(t)
	d := def("r", "sleep", "inf")
	d.Ready = config.Ready{TCP: "no-such-host.invalid:80"}
	d.Restart = config.RestartNever
	s := f.add(d, true)
	st := waitState(t, s, StateExited)
	if st.LastExit == nil || st.LastExit.Code != 126 {
		t.Errorf("last exit %+v, want code 126", st.LastExit)
	}
	if !strings.Contains(st.Reason, `host "no-such-host.invalid" is not an IP address and not in /etc/hosts`) {
		t.Errorf("reason %q", st.Reason)
	}
}

// A tcp probe that never gets an answer slows down past probeFastFor, up
// to probeSlowMax: a service whose port is not its own costs PID 1 a
// wake-up a minute, not two a second for as long as it runs (a review:
// 50 system calls a second from one such service).
func TestTCPProbeSlowsWhenNeverReady(t *testing.T) {
	defer func(fast, forr, slow time.Duration, dial func(context.Context, netip.AddrPort, time.Duration) error) {
		probeFastMax, probeFastFor, probeSlowMax, probeDial = fast, forr, slow, dial
	}(probeFastMax, probeFastFor, probeSlowMax, probeDial)
	probeFastMax, probeFastFor, probeSlowMax = 20*time.Millisecond, 60*time.Millisecond, time.Hour
	dials := make(chan time.Time, 64)
	probeDial = func(context.Context, netip.AddrPort, time.Duration) error {
		dials <- time.Now()
		return unix.ECONNREFUSED
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go awaitTCP(ctx, netip.MustParseAddrPort("127.0.0.1:1"), make(chan struct{}))
	// 10, 20, 20, 20 ms (the first 60 ms), then 40, 80, 160, 320: the
	// eighth wait is sixteen times the fast bound.
	var at []time.Time
	for len(at) < 9 {
		select {
		case d := <-dials:
			at = append(at, d)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d probes in 10 s", len(at))
		}
	}
	if last := at[8].Sub(at[7]); last < 8*probeFastMax {
		t.Errorf("the eighth wait %v, want it past %v: the probe kept its fast pace", last, 8*probeFastMax)
	}
}
