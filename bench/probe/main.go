// Command probe is the one service every init runs in hinit's benchmarks
// (bench/cmd/hbench). It reads CLOCK_MONOTONIC before anything else of its
// own runs and reports that stamp on the harness's FIFO ($PROBE_FIFO), so
// every latency the harness measures ends at the same point for every init:
// the kernel's fork+exec of a small static Go program plus the Go runtime's
// start. The harness measures that floor too (mode "ns --fork").
//
// Usage: probe MODE [NAME [ARG]]. Modes:
//
//	exit          stamp, exit 0 (boot to main exec; floor)
//	sleep         stamp, sleep until a signal kills it (cooperative: TERM ends it at once)
//	ignore-term   stamp, ignore SIGTERM, sleep (only SIGKILL ends it)
//	crash         stamp, exit 1 at once (crash loop)
//	term-exit [DIR]  stamp, exit 0 at SIGTERM (even as PID 1); with DIR, hold an
//	              inotify watch on DIR meanwhile; reports "armed" once ready (the shutdown floors)
//	fleet N       stamp, start N "sleep" children of its own, sleep
//	orphans N     stamp, make N orphans, kill them at once, time until all are reaped
//	reap-self N   the orphans' floor: the same storm of its own children, reaped by itself
//	orphan-parent N  (internal) start N sleepers in one process group, print their pids, exit
//	ns [--fork] -- ARGV...  (internal) PID 1 of a fresh PID namespace: mount /proc,
//	              stamp t0, then exec ARGV (or fork+exec it and wait: the floor)
//	init -- ARGV...  a minimal Go init: catch what hinit catches, run ARGV, forward,
//	              reap, exit with ARGV's status (the bare floor)
//	run -- ARGV...   fork+exec ARGV, wait4 for it, exit with its status; no
//	              signal caught, so not an init (the bare floor without signals)
//
// Run as an s6 `run` file (a symlink named run), it takes its name from its
// working directory and its mode from the file probe-mode there (default
// sleep): s6-supervise passes only the service name.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// started is the probe's stamp: a package variable is initialised before
// main runs, right after the Go runtime has started.
var started = mono()

// mono is CLOCK_MONOTONIC in nanoseconds: the clock the harness shares
// with every process on the machine, namespaces included.
func mono() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func main() {
	mode, name, arg := parseArgs(os.Args)
	switch mode {
	case "ns":
		os.Exit(nsExec(os.Args[2:]))
	case "init":
		os.Exit(goInit(os.Args[2:]))
	case "run":
		os.Exit(goRun(os.Args[2:]))
	case "orphan-parent":
		os.Exit(orphanParent(atoi(arg)))
	}
	report("up", name, started)
	switch mode {
	case "exit":
		return
	case "crash":
		os.Exit(1)
	case "sleep":
		sleepForever()
	case "term-exit":
		termExit(arg)
	case "ignore-term":
		ignoreTerm()
		sleepForever()
	case "fleet":
		fleet(name, atoi(arg))
		sleepForever()
	case "orphans":
		os.Exit(orphans(name, atoi(arg)))
	case "reap-self":
		os.Exit(reapSelf(name, atoi(arg)))
	default:
		fmt.Fprintf(os.Stderr, "probe: unknown mode %q\n", mode)
		os.Exit(2)
	}
}

// parseArgs reads MODE NAME ARG from argv, or, when run as an s6 run file,
// from the service dir (s6-supervise runs "./run NAME").
func parseArgs(argv []string) (mode, name, arg string) {
	if filepath.Base(argv[0]) != "run" && len(argv) > 1 {
		mode = argv[1]
		if len(argv) > 2 {
			name = argv[2]
		}
		if len(argv) > 3 {
			arg = argv[3]
		}
		return mode, name, arg
	}
	wd, _ := os.Getwd()
	mode = "sleep"
	if b, err := os.ReadFile("probe-mode"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			mode = f[0]
			if len(f) > 1 {
				arg = f[1]
			}
		}
	}
	return mode, filepath.Base(wd), arg
}

// report writes "KIND NAME PID MONO [EXTRA]" to the harness's FIFO. One
// write of less than PIPE_BUF bytes is atomic among many writers.
func report(kind, name string, at int64, extra ...string) {
	path := os.Getenv("PROBE_FIFO")
	if path == "" {
		return
	}
	line := kind + " " + name + " " + strconv.Itoa(os.Getpid()) + " " + strconv.FormatInt(at, 10)
	for _, e := range extra {
		line += " " + e
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: open %s: %v\n", path, err)
		return
	}
	unix.Write(fd, []byte(line+"\n"))
	unix.Close(fd)
}

// sleepForever blocks in pause(2) until a signal ends the process.
func sleepForever() {
	for {
		unix.Pause()
	}
}

// termExit waits for SIGTERM and exits 0. With dir it first watches dir
// with inotify, so that its exit pays what the kernel's teardown of an
// inotify instance costs (fsnotify waits for an SRCU grace period).
func termExit(dir string) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	if dir != "" {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err == nil {
			_, err = unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_DELETE)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "probe: inotify %s: %v\n", dir, err)
			os.Exit(1)
		}
	}
	report("armed", "main", mono())
	<-c
	os.Exit(0)
}

// ignoreTerm sets SIGTERM to SIG_IGN, the way a service that does not
// cooperate would.
func ignoreTerm() { signal.Ignore(syscall.SIGTERM) }

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: bad number %q\n", s)
		os.Exit(2)
	}
	return n
}
