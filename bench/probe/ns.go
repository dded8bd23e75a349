package main

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// nsExec runs as PID 1 of the fresh PID and mount namespaces the harness
// cloned: it gives the namespace its own /proc (like unshare --mount-proc),
// stamps t0 and then becomes the init under test with execve, so that the
// init keeps PID 1 and t0 is the last instant before the init's own exec.
// With --fork it instead forks and execs ARGV and waits for it: that is
// the floor every latency includes (fork+exec+Go start, no init at all).
func nsExec(args []string) int {
	fork := false
	if len(args) > 0 && args[0] == "--fork" {
		fork, args = true, args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "probe: ns: nothing to run")
		return 2
	}
	if err := mountProc(); err != nil {
		fmt.Fprintf(os.Stderr, "probe: ns: %v\n", err)
		return 1
	}
	report("t0", "ns", mono())
	if !fork {
		err := syscall.Exec(args[0], args, os.Environ())
		fmt.Fprintf(os.Stderr, "probe: ns: exec %s: %v\n", args[0], err)
		return 127
	}
	return forkWait(args)
}

// mountProc makes the mount namespace private and mounts a proc of the new
// PID namespace on /proc, so the init sees only its own processes.
func mountProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// forkWait starts argv the way a Go parent does (clone+exec) and waits.
func forkWait(argv []string) int {
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: ns: start %s: %v\n", argv[0], err)
		return 127
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	return ws.ExitStatus()
}
