package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// goInit is the bare scenario's floor: the least a Go PID 1 does to run
// argv as tini does. It catches what hinit catches in its bare mode as PID
// 1 without a terminal, each signal with the Go runtime's _SigNotify flag
// a round trip to its signal thread: the eight signals it forwards (TERM,
// INT, QUIT, HUP, USR1, USR2, PWR, SIGRTMIN+3), SIGWINCH, SIGCHLD, SIGPIPE
// (so that a write to a broken stderr is an EPIPE), SIGTSTP (so that a
// Ctrl-Z does not stop an init that is not PID 1) and the fault signals
// someone may send (ABRT the one round trip among them). It forks and
// execs argv, forwards to it the first eight and SIGWINCH, reaps every
// child, and exits with argv's status once it is reaped.
func goInit(argv []string) int {
	argv, ok := command("init", argv)
	if !ok {
		return 2
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPWR, syscall.Signal(37), syscall.SIGWINCH, syscall.SIGCHLD)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGABRT, syscall.SIGBUS, // caught, never read
		syscall.SIGFPE, syscall.SIGILL, syscall.SIGSEGV, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGSTKFLT)
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: init: start %s: %v\n", argv[0], err)
		return 127
	}
	for s := range sigs {
		if s != syscall.SIGCHLD {
			syscall.Kill(pid, s.(syscall.Signal))
			continue
		}
		for {
			var ws syscall.WaitStatus
			p, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || p <= 0 {
				break
			}
			if p == pid {
				if ws.Signaled() {
					return 128 + int(ws.Signal())
				}
				return ws.ExitStatus()
			}
		}
	}
	return 0
}

// goRun is the bare scenario's second floor: a Go PID 1 that catches no
// signal at all. It is not an init (a TERM ends it through the Go
// runtime's default, and nothing is forwarded): it forks and execs argv,
// waits for it with a blocking wait4 and exits with its status, which is
// what running a program costs a Go program, before any init's work.
func goRun(argv []string) int {
	argv, ok := command("run", argv)
	if !ok {
		return 2
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: run: start %s: %v\n", argv[0], err)
		return 127
	}
	for {
		var ws syscall.WaitStatus
		p, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "probe: run: wait: %v\n", err)
			return 1
		}
		if p == pid {
			if ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ws.ExitStatus()
		}
	}
}

// command is the program mode runs: argv after an optional "--"; ok is
// false, said on stderr, when there is none.
func command(mode string, argv []string) ([]string, bool) {
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		fmt.Fprintf(os.Stderr, "probe: %s: nothing to run\n", mode)
		return nil, false
	}
	return argv, true
}
