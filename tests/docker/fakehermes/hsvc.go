package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hsvc exit codes (SPEC §4) the adapter tells apart.
const (
	hsvcNoService = 3
)

// underHinit reports whether hinit supervises this container: its control
// socket exists. This works as any user and whether or not hinit is PID 1
// (docker run --init, Kubernetes shareProcessNamespace), unlike looking at
// /proc/1.
func underHinit() bool {
	dir := os.Getenv("HINIT_RUNTIME_DIR")
	if dir == "" {
		dir = "/run/hinit"
	}
	fi, err := os.Stat(filepath.Join(dir, "control.sock"))
	return err == nil && fi.Mode().Type() == fs.ModeSocket
}

// hsvcPath is the hsvc binary: on PATH, else where the image installs it.
func hsvcPath() string {
	if p, err := exec.LookPath("hsvc"); err == nil {
		return p
	}
	return "/usr/local/bin/hsvc"
}

// hsvcResult is one finished hsvc call.
type hsvcResult struct {
	code   int
	stdout string
	stderr string // hsvc's one error line, if any
}

// callHsvc runs hsvc with args and returns its exit code and output.
func callHsvc(args ...string) hsvcResult {
	cmd := exec.Command(hsvcPath(), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := hsvcResult{stdout: out.String(), stderr: strings.TrimSpace(errb.String())}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code, r.stderr = exitFailed, fmt.Sprintf("run hsvc: %v", err)
	}
	return r
}

// notSupervised is what hermes says when no service manager runs.
func notSupervised() int {
	fmt.Fprintln(os.Stderr, "✗ no service manager: hinit's control socket is not there (not in the Hermes container?)")
	return exitFailed
}
