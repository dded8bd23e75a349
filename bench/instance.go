package bench

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// errTimeout is returned when what was awaited did not happen in time.
var errTimeout = errors.New("timed out")

// errGone is returned when the init exited while something was awaited.
var errGone = errors.New("init exited")

// launch says how to start one init.
type launch struct {
	argv []string // the init and its arguments, absolute path first
	env  []string // added to the harness's base environment
	fork bool     // the floor: the namespace's first process forks argv instead of becoming it
}

// instance is one init running as PID 1 of its own PID namespace, with the
// FIFO its probes report on.
type instance struct {
	system string
	dir    string
	pid    int   // the init's pid in the harness's namespace
	t0     int64 // stamped by the namespace's first process just before exec of the init

	cmd  *exec.Cmd
	fifo *os.File
	logf *os.File

	mu      sync.Mutex
	events  []event       // guarded by mu
	changed chan struct{} // closed and replaced on every event, guarded by mu

	gone   chan struct{} // closed once the init has exited and been waited for
	goneAt int64         // CLOCK_MONOTONIC at that moment; read after gone is closed
}

// start runs l as PID 1 of fresh PID and mount namespaces: the probe binary
// (mode ns) mounts /proc, stamps t0 and execs the init, so t0 is the last
// instant before the init's exec and the init keeps PID 1.
func (h *Harness) start(system, dir string, l launch) (*instance, error) {
	fifoPath := filepath.Join(dir, "stamps.fifo")
	if err := unix.Mkfifo(fifoPath, 0o600); err != nil {
		return nil, fmt.Errorf("mkfifo %s: %w", fifoPath, err)
	}
	fifo, err := os.OpenFile(fifoPath, os.O_RDWR, 0) // O_RDWR: never EOF, never blocks the writers' open
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", fifoPath, err)
	}
	logf, err := os.Create(filepath.Join(dir, "init.log"))
	if err != nil {
		fifo.Close()
		return nil, fmt.Errorf("create init log: %w", err)
	}
	args := []string{"ns"}
	if l.fork {
		args = append(args, "--fork")
	}
	cmd := exec.Command(h.probe, append(append(args, "--"), l.argv...)...)
	cmd.Dir = dir
	cmd.Env = append(append(h.baseEnv(), "PROBE_FIFO="+fifoPath), l.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		Pdeathsig:  syscall.SIGKILL,
	}
	in := &instance{system: system, dir: dir, cmd: cmd, fifo: fifo, logf: logf,
		changed: make(chan struct{}), gone: make(chan struct{})}
	go in.read()
	if err := cmd.Start(); err != nil {
		in.closeFiles()
		return nil, fmt.Errorf("start %s in a new PID namespace: %w", system, err)
	}
	in.pid = cmd.Process.Pid
	go in.wait()
	ev, _, err := in.waitEvent(time.Now().Add(10*time.Second), 0, func(e event) bool { return e.kind == "t0" })
	if err != nil {
		in.kill()
		return nil, fmt.Errorf("%s: no t0 from the namespace: %w (see %s)", system, err, logf.Name())
	}
	in.t0 = ev.at
	return in, nil
}

// wait reaps the init and stamps the moment it is gone.
func (in *instance) wait() {
	in.cmd.Wait()
	in.goneAt = mono()
	close(in.gone)
}

// kill ends the init with SIGKILL (the kernel then kills its whole
// namespace) and waits until it is gone.
func (in *instance) kill() {
	syscall.Kill(in.pid, syscall.SIGKILL)
	select {
	case <-in.gone:
	case <-time.After(30 * time.Second):
	}
	in.closeFiles()
}

// waitGone waits until the init has exited by itself.
func (in *instance) waitGone(d time.Duration) error {
	select {
	case <-in.gone:
		return nil
	case <-time.After(d):
		return errTimeout
	}
}

func (in *instance) closeFiles() {
	in.fifo.Close()
	in.logf.Close()
}
