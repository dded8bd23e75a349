package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sleeperPath is the orphans' program: small, single-threaded, everywhere.
const sleeperPath = "/bin/sleep"

// fleet starts n sleeping probes of its own, for inits that supervise only
// one child (tini, dumb-init, catatonit): the same process count as n
// services under a supervisor.
func fleet(name string, n int) {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: fleet: %v\n", err)
		os.Exit(1)
	}
	for i := range n {
		argv := []string{self, "sleep", name + "-" + strconv.Itoa(i)}
		if _, err := syscall.ForkExec(self, argv, &syscall.ProcAttr{Env: os.Environ()}); err != nil {
			fmt.Fprintf(os.Stderr, "probe: fleet: %v\n", err)
		}
	}
}

// orphans makes n orphans of the init and times how fast the init reaps
// them. A child of ours (the orphans' parent) starts n sleepers in one
// process group, kills them and waits until all n are zombies; it then
// prints their pids, stamps tExit and exits. Its exit reparents the n
// zombies to the init (the kernel does that before it tells us the parent
// is gone), so the moment our wait for it returns is t0, and we watch until
// none of their pids exists any more: t1. We report
// "reaped NAME PID t0 t1 n tExit"; tExit → t0 is the kernel's work of
// ending a process with n zombie children and reparenting them.
func orphans(name string, n int) int {
	pids, tExit, wait, err := makeOrphans(name, n)
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: orphans: %v\n", err)
		return 1
	}
	wait()
	t0 := mono()
	for _, pid := range pids {
		for unix.Kill(pid, 0) == nil { // a zombie still answers
			unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
	}
	t1 := mono()
	report("reaped", name, t0, strconv.FormatInt(t1, 10), strconv.Itoa(len(pids)), strconv.FormatInt(tExit, 10))
	return 0
}

// makeOrphans starts "probe orphan-parent n" and reads the pids and the
// stamp it prints as it exits; wait waits for its exit.
func makeOrphans(name string, n int) (pids []int, tExit int64, wait func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, 0, nil, err
	}
	cmd := exec.Command(self, "orphan-parent", name, strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, nil, fmt.Errorf("orphan-parent: %w", err)
	}
	defer func() {
		if err != nil {
			cmd.Wait()
		}
	}()
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, 0, nil, fmt.Errorf("orphan-parent: read pids: %w", err)
	}
	if pids, err = atois(strings.Fields(line)); err != nil {
		return nil, 0, nil, fmt.Errorf("orphan-parent: %w", err)
	}
	if line, err = r.ReadString('\n'); err != nil {
		return nil, 0, nil, fmt.Errorf("orphan-parent: read its stamp: %w", err)
	}
	if tExit, err = strconv.ParseInt(strings.TrimSpace(line), 10, 64); err != nil {
		return nil, 0, nil, err
	}
	return pids, tExit, func() { cmd.Wait() }, nil
}

// orphanParent starts n sleepers, kills them and waits until every one is a
// zombie; then it prints their pids, and t0 as the last thing before it
// exits.
func orphanParent(n int) int {
	pgid, pids, err := startSleepers(n)
	if err == nil {
		err = killToZombies(pgid, pids)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: orphan-parent: %v\n", err)
		return 1
	}
	w := bufio.NewWriter(os.Stdout)
	for i, p := range pids {
		if i > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(strconv.Itoa(p))
	}
	w.WriteByte('\n')
	w.Flush()
	os.Stdout.WriteString(strconv.FormatInt(mono(), 10) + "\n")
	return 0
}

// reapSelf is the floor of the orphans scenario: the same n zombies, but
// our own children, reaped by us with wait4: a reaper with nothing in its
// way and no reparenting.
func reapSelf(name string, n int) int {
	pgid, pids, err := startSleepers(n)
	if err == nil {
		err = killToZombies(pgid, pids)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: reap-self: %v\n", err)
		return 1
	}
	t0 := mono()
	for left := len(pids); left > 0; {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); err == nil {
			left--
		} else if err != unix.EINTR {
			fmt.Fprintf(os.Stderr, "probe: reap-self: wait4: %v\n", err)
			return 1
		}
	}
	report("reaped", name, t0, strconv.FormatInt(mono(), 10), strconv.Itoa(len(pids)))
	return 0
}

// killToZombies kills the group and waits until every pid is a zombie.
func killToZombies(pgid int, pids []int) error {
	if err := unix.Kill(-pgid, unix.SIGKILL); err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range pids {
		for !isZombie(p) {
			if time.Now().After(deadline) {
				return fmt.Errorf("pid %d never became a zombie", p)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	return nil
}

// isZombie reads the state field of /proc/PID/stat.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

func atois(fields []string) ([]int, error) {
	out := make([]int, len(fields))
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("not a pid: %q", f)
		}
		out[i] = n
	}
	return out, nil
}

// startSleepers starts n sleepers in a new process group, every fd of
// theirs on /dev/null, and returns the group and their pids.
func startSleepers(n int) (int, []int, error) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, nil, err
	}
	defer null.Close()
	fds := []uintptr{null.Fd(), null.Fd(), null.Fd()}
	pgid := 0
	pids := make([]int, 0, n)
	for range n {
		pid, err := syscall.ForkExec(sleeperPath, []string{"sleep", "1000"}, &syscall.ProcAttr{
			Files: fds,
			Sys:   &syscall.SysProcAttr{Setpgid: true, Pgid: pgid},
		})
		if err != nil {
			return 0, nil, err
		}
		if pgid == 0 {
			pgid = pid
		}
		pids = append(pids, pid)
	}
	return pgid, pids, nil
}
