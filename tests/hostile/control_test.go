package hostile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
)

// Trial 3 of issue 14: the control socket locked by the control group. The
// 64 request slots used to be taken before the caller was known and to be
// held by idle connections and by waits that never end: 64 `hsvc wait x
// --down` as hermes made root's `hsvc check` fail "hinit is busy", and a
// reconnecting loop wrote a warning per refusal (112 MB in 25 s).

// floodConfig runs a service x for the waits, with the hermes user (uid
// 10000, group 10000) as the image's user: the control group.
const floodConfig = "user: \"10000\"\nservices:\n  x:\n    command: [/bin/sleep, \"100000\"]\n"

// TestControlFlood: 64 and 1000 hermes connections, idle, waiting on x, or
// reconnecting without pause, leave root's check answering in < 100 ms,
// hinit's log does not grow with the refusals, and hermes's own requests
// work again once the flood ends.
func TestControlFlood(t *testing.T) {
	p := startInit(t, floodConfig)
	bin := p.exposeSelf()
	for _, mode := range []string{"idle", "wait", "reconnect"} {
		for _, n := range []int{64, 1000} {
			t.Run(fmt.Sprintf("%d %s", n, mode), func(t *testing.T) {
				logBefore := len(p.out.String())
				stop := p.flood(t, bin, mode, n)
				var times []time.Duration
				for range 21 {
					times = append(times, p.rootCheck(t))
				}
				stop()
				testprog.WaitFor(t, 10*time.Second, "hermes's own hsvc status to work again", func() bool {
					code, _, _ := p.hsvc(hermes, "status")
					return code == 0
				})
				slices.Sort(times)
				median, worst := times[len(times)/2], times[len(times)-1]
				t.Logf("root's check under %d %s hermes connections: median %v, worst %v of %d", n, mode, median, worst, len(times))
				// The median is the acceptance figure; the worst only has to stay
				// well under the health check's timeout on a machine shared with
				// the flood (and -race).
				if median > 100*time.Millisecond || worst > time.Second {
					t.Errorf("root's check took %v (median), %v (worst); want < 100ms and < 1s", median, worst)
				}
				logged := p.out.String()[logBefore:]
				if lines := strings.Count(logged, "\n"); lines > 20 {
					t.Errorf("hinit logged %d lines (%d bytes) during the flood, want a few: %.2000s", lines, len(logged), logged)
				}
			})
		}
	}
}

// rootCheck is `hsvc check` as root, in this process (so that what is
// timed is hinit's answer, not the start of a program); it fails the trial
// unless hinit says ok.
func (p *initProc) rootCheck(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	c, err := control.Dial(filepath.Join(p.dir, "run", control.SocketName))
	if err != nil {
		t.Fatalf("root's check: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, &control.Request{Verb: control.VerbCheck})
	d := time.Since(start)
	if err != nil || !resp.OK {
		t.Fatalf("root's check after %v: %v %+v", d, err, resp)
	}
	return d
}

// exposeSelf copies the test binary where the hermes user may run it.
func (p *initProc) exposeSelf() string {
	p.t.Helper()
	self, err := os.Executable()
	must(p.t, err)
	bin := filepath.Join(p.dir, "hostile.test")
	must(p.t, exec.Command("cp", self, bin).Run())
	must(p.t, os.Chmod(bin, 0o755))
	p.bin = bin
	return bin
}

// flood starts the flood helper as hermes and returns once each of its n
// clients has connected and sent what it sends; stop ends it.
func (p *initProc) flood(t *testing.T, bin, mode string, n int) (stop func()) {
	t.Helper()
	cmd := exec.Command(bin, mode, strconv.Itoa(n), filepath.Join(p.dir, "run", control.SocketName))
	cmd.Env = []string{"HOSTILE_AS=flood"}
	cmd.SysProcAttr = hermesAttr()
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	stop = sync.OnceFunc(func() { cmd.Process.Kill(); cmd.Wait() })
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		stop()
		t.Fatalf("flood helper said %q: %v", line, err)
	}
	return stop
}

// flood is the hostile client (HOSTILE_AS=flood, run as hermes): n
// connections to the socket at path that never let go. idle: connect and
// say nothing; wait: `hsvc wait x --down`; reconnect: `hsvc status`. Each
// connects again as soon as hinit closes it. It prints "ready" once each
// has connected and sent its request, and runs until killed, or until the
// socket is gone.
func flood(args []string) int {
	mode, path := args[0], args[2]
	n, _ := strconv.Atoi(args[1])
	req := map[string]string{
		"idle":      "",
		"wait":      `{"v":1,"verb":"wait","names":["x"],"until":"down"}` + "\n",
		"reconnect": `{"v":1,"verb":"status"}` + "\n",
	}[mode]
	started := make(chan struct{}, n)
	for range n {
		go func() {
			first := true
			for {
				conn, err := net.Dial("unix", path)
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
					os.Exit(0) // hinit is gone
				}
				if err == nil {
					io.WriteString(conn, req)
				}
				if first {
					started <- struct{}{}
					first = false
				}
				if err == nil {
					io.Copy(io.Discard, conn)
					conn.Close()
				}
			}
		}()
	}
	for range n {
		<-started
	}
	fmt.Println("ready")
	select {}
}

// hermesAttr runs a process as the hermes user.
func hermesAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: hermes, Pdeathsig: syscall.SIGKILL}
}
