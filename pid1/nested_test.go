package pid1

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// A hinit started inside a container another hinit supervises (an old
// entrypoint's `tini -g -- /init CMD`, a `docker exec ... hinit`) runs CMD
// as tini would, with CMD's exit status (main.default when there is none),
// and leaves the first one's runtime dir, scandir and services alone; once
// the first is gone, the socket it left stops no hinit.
func TestNestedHinit(t *testing.T) {
	testprog.ExposeBinary(t)
	p := startInit(t, initOpts{notPID1: true, args: argv(prog("sleep", "inf")),
		config: fmt.Sprintf("main: {default: [/bin/sh, -c, 'exit 8']}\nservices:\n  steady: {command: %s}\n", prog("sleep", "inf"))})
	p.waitOutput("main started", true)
	publishDir(t, p, "dyn", fmt.Sprintf("command: %s\n", prog("sleep", "inf")), 0, false)
	testprog.WaitFor(t, 15*time.Second, "steady and dyn up", func() bool {
		s1, _ := p.statusOf("steady")
		s2, _ := p.statusOf("dyn")
		return s1 == "up" && s2 == "up"
	})
	second := func(args ...string) (int, string) {
		self := testprog.Command("x")[0]
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, self, append([]string{"--"}, args...)...)
		cmd.WaitDelay = time.Second // a child of the second one holding stderr
		cmd.Env = p.cmd.Env
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), errb.String()
	}
	code, errOut := second("/bin/sh", "-c", "exit 7")
	if code != 7 || !strings.Contains(errOut, "another hinit supervises this container") {
		t.Errorf("second hinit: exit %d, stderr %q; want 7 and the notice", code, errOut)
	}
	// No command: main.default, as the first one would run it.
	if code, errOut := second(); code != 8 {
		t.Errorf("second hinit with no command: exit %d, stderr %q; want main.default's 8", code, errOut)
	}
	for _, name := range []string{"steady", "dyn"} {
		if st, why := p.statusOf(name); st != "up" {
			t.Errorf("%s after the second hinit: %s %s, want up", name, st, why)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, "service", "dyn", "service.yaml")); err != nil {
		t.Errorf("the first hinit's scandir was touched: %v", err)
	}

	p.signal(15)
	p.wait(30 * time.Second)
	// A socket nobody listens on, as a killed hinit leaves.
	sock := filepath.Join(p.dir, "run", "control.sock")
	os.Remove(sock)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if code, errOut = second("/bin/sh", "-c", "exit 7"); code != 7 || strings.Contains(errOut, "another hinit") {
		t.Errorf("after the first hinit ended: exit %d, stderr %q; want 7 and no notice", code, errOut)
	}
}
