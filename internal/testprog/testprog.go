// Package testprog turns a Go test binary into the small helper programs
// hinit's tests supervise (sleep, exit N, ignore TERM, spawn orphans, ...),
// the way os/exec's tests do: no shell fixtures, and the programs are exactly
// as fast and as portable as the tests themselves.
//
// A test package calls Main at the top of TestMain; Command builds the argv
// that runs a named program.
package testprog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const envKey = "HINIT_TESTPROG"

// Command returns an argv that runs program name with args when executed,
// and the environment entry that selects it.
func Command(name string, args ...string) []string {
	self := exposed
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			panic(err)
		}
	}
	return append([]string{self, "-test.run=^$", "--", name}, args...)
}

// Env is the environment entry every Command needs.
func Env() string { return envKey + "=1" }

// Main runs a helper program and exits when the process was started as one
// (env HINIT_TESTPROG=1); otherwise it returns and the tests run.
func Main() {
	if os.Getenv(envKey) != "1" {
		return
	}
	args := os.Args[1:]
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "testprog: no program named")
		os.Exit(2)
	}
	prog, ok := programs[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "testprog: unknown program %q\n", args[0])
		os.Exit(2)
	}
	os.Exit(prog(args[1:]))
}

var programs = map[string]func([]string) int{
	"exit":        exitProg,
	"sleep":       sleepProg,
	"ignore-term": ignoreTerm,
	"trap-term":   trapTerm,
	"orphans":     orphans,
	"children":    children,
	"echo":        echo,
	"notify":      notify,
	"listen":      listen,
	"signals":     signals,
	"signals-all": signalsAll,
	"whoami":      whoami,
	"kill-self":   killSelf,
	"reaped":      reaped,
	"tty":         ttyProg,
	"sigign":      func([]string) int { fmt.Println(sigIgn("self")); return 0 },
	"gateway":     gateway,
	"session":     session,
	"leave-fd":    leaveFD,
	"lease":       lease,
	"leave-group": leaveGroup,
	"hog":         hog,
	"type-in":     typeIn,
}

// type-in TEXT: pushes TEXT into the input queue of the terminal on fd 0
// (TIOCSTI), as if typed there: what its next reader reads.
func typeIn(a []string) int {
	if len(a) != 1 {
		fmt.Fprintln(os.Stderr, "usage: type-in TEXT")
		return 2
	}
	for i := range len(a[0]) {
		c := a[0][i]
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c))); e != 0 {
			fmt.Fprintln(os.Stderr, "TIOCSTI:", e)
			return 1
		}
	}
	return 0
}

// hog PROCS: writes its own pid to PROCS (a cgroup's cgroup.procs, so that
// it runs under that cgroup's memory limit), then takes memory a MiB at a
// time, touching every page, until the kernel ends it; exits 1 if it got
// 4 GiB.
func hog(a []string) int {
	if len(a) != 1 {
		fmt.Fprintln(os.Stderr, "usage: hog PROCS")
		return 2
	}
	if err := os.WriteFile(a[0], []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var held [][]byte
	for range 4096 {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
	}
	fmt.Println("hog: 4 GiB and no OOM kill", len(held))
	return 1
}

// leave-group [keep]: starts a sleeping child as the leader of a process
// group of its own, joins that group (so that no group has its own pid any
// more; with keep, a child that ignores TERM stays in it), ignores SIGTERM
// and says "ready".
func leaveGroup(a []string) int {
	if len(a) > 0 && a[0] == "keep" {
		k := exec.Command("/bin/sh", "-c", "trap '' TERM; exec sleep 3600")
		if err := k.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	c := exec.Command("/bin/sleep", "3600")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := syscall.Setpgid(0, c.Process.Pid); err != nil {
		fmt.Fprintln(os.Stderr, "setpgid:", err)
		return 1
	}
	signal.Ignore(syscall.SIGTERM)
	fmt.Println("ready")
	select {}
}

// lease PATH: takes a write lease on PATH (its owner may), says "leased";
// says "broken" when someone opens PATH (an exec of it: the kernel holds
// that open up to fs.lease-break-time, 45 s by default), and lets go of
// the lease once stdin is closed.
func lease(a []string) int {
	f, err := os.Open(a[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	broken := make(chan os.Signal, 1)
	signal.Notify(broken, syscall.SIGIO)
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
		fmt.Fprintln(os.Stderr, "F_SETLEASE:", err)
		return 1
	}
	fmt.Println("leased")
	<-broken
	fmt.Println("broken")
	bufio.NewReader(os.Stdin).ReadString(0)
	unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
	return 0
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

// exit N: exits with status N.
func exitProg(a []string) int { return atoi(a[0]) }

// sleep D: sleeps for the duration D ("inf" = forever), exits 0.
func sleepProg(a []string) int {
	if a[0] == "inf" {
		select {}
	}
	d, err := time.ParseDuration(a[0])
	if err != nil { // "30" is no duration: a test's mistake, not 0 s
		fmt.Fprintf(os.Stderr, "testprog sleep: %v\n", err)
		return 2
	}
	time.Sleep(d)
	return 0
}

// ignore-term [FD]: ignores SIGTERM forever; says "ready" on stdout, and
// with FD also as a newline on that fd (readiness notification).
func ignoreTerm(a []string) int {
	signal.Ignore(syscall.SIGTERM)
	fmt.Println("ready")
	if len(a) > 0 {
		os.NewFile(uintptr(atoi(a[0])), "notify").Write([]byte("\n"))
	}
	select {}
}

// trap-term [CODE]: prints "ready", exits CODE (default 0) on SIGTERM after
// printing "bye".
func trapTerm(a []string) int {
	code := 0
	if len(a) > 0 {
		code = atoi(a[0])
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	fmt.Println("ready")
	<-ch
	fmt.Println("bye")
	return code
}

// orphans N D: starts N children that sleep D each (/bin/sleep: 500 Go
// programs starting at once took seconds under load), then exits at once,
// so the children become orphans of the nearest reaper.
func orphans(a []string) int {
	n := atoi(a[0])
	for i := 0; i < n; i++ {
		c := exec.Command("/bin/sleep", a[1])
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// children N CODE: runs N short children one by one with exec.Cmd, checks
// each status, then exits CODE. It is a service that waits for its own
// children while hinit reaps around it (go-reaper#11).
func children(a []string) int {
	n := atoi(a[0])
	for i := 0; i < n; i++ {
		c := exec.Command("/bin/true")
		if err := c.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 99
		}
	}
	return atoi(a[1])
}

// echo N WORD: prints N lines "WORD i" to stdout, then exits 0.
func echo(a []string) int {
	w := bufio.NewWriter(os.Stdout)
	for i := 1; i <= atoi(a[0]); i++ {
		fmt.Fprintf(w, "%s %d\n", a[1], i)
	}
	w.Flush()
	return 0
}

// notify FD D: after D writes a newline to FD (readiness), then sleeps.
func notify(a []string) int {
	d, _ := time.ParseDuration(a[1])
	time.Sleep(d)
	f := os.NewFile(uintptr(atoi(a[0])), "notify")
	f.Write([]byte("\n"))
	f.Close()
	select {}
}

// listen ADDR D: after D listens on ADDR (tcp), then serves nothing.
func listen(a []string) int {
	d, _ := time.ParseDuration(a[1])
	time.Sleep(d)
	ln, err := net.Listen("tcp", a[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		c.Close()
	}
}

// signals: signals-all SIGTERM: prints "ready", then one line "got
// SIGNAME" per signal received; exits 0 on SIGTERM after printing it.
func signals([]string) int { return signalsAll([]string{"SIGTERM"}) }

// signals-all SIG...: prints "ready", then one line "got SIGNAME" per
// signal received; exits 0 once every SIG named (SIGTERM, SIGUSR1...) has
// come, in any order: signals sent one after the other can reach a Go
// program's threads out of order. SIGCONT is printed only when named:
// hinit sends it after every stop signal (as s6-supervise does), and it
// could come before the TERM it follows.
func signalsAll(names []string) int {
	want := make(map[string]bool)
	for _, n := range names {
		want[n] = true
	}
	ch := make(chan os.Signal, 8)
	signal.Notify(ch)
	fmt.Println("ready")
	for s := range ch {
		name := unix.SignalName(s.(syscall.Signal))
		if s == syscall.SIGURG || s == syscall.SIGCHLD || s == syscall.SIGCONT && !want[name] {
			continue
		}
		fmt.Printf("got %s\n", name)
		if delete(want, name); len(want) == 0 {
			return 0
		}
	}
	return 0
}

// whoami: prints uid gid groups cwd and selected env vars, then exits 0.
func whoami([]string) int {
	groups, _ := os.Getgroups()
	wd, _ := os.Getwd()
	var g []string
	for _, x := range groups {
		g = append(g, strconv.Itoa(x))
	}
	fmt.Printf("uid=%d gid=%d groups=%s cwd=%s HOME=%s USER=%s LOGNAME=%s\n",
		os.Getuid(), os.Getgid(), strings.Join(g, ","), wd,
		os.Getenv("HOME"), os.Getenv("USER"), os.Getenv("LOGNAME"))
	for _, k := range []string{"A", "B", "TERM", "GREETING"} {
		if v, ok := os.LookupEnv(k); ok {
			fmt.Printf("%s=%s\n", k, v)
		}
	}
	return 0
}

// kill-self SIG: kills itself with signal number SIG.
func killSelf(a []string) int {
	syscall.Kill(os.Getpid(), syscall.Signal(atoi(a[0])))
	time.Sleep(time.Second)
	return 0
}

// reaped N: makes N orphans (children of a process that exits at once),
// then waits until the reaper above it (its parent) has reaped them all.
// Exits 0 when none is left, alive or a zombie, 1 after 20 s.
func reaped(a []string) int {
	reaper := os.Getppid()
	c := exec.Command("/proc/self/exe", Command("orphans", a[0], "0s")[1:]...)
	c.Env = append(os.Environ(), Env())
	if err := c.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "orphans:", err)
		return 1
	}
	// Every orphan must be gone, not only the zombies: an orphan still
	// starting (a Go program, milliseconds under load) is no zombie yet,
	// and one that exits after main would be left to whoever reaps next.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if n := childrenOf(reaper, os.Getpid()); n == 0 {
			fmt.Println("no zombies")
			return 0
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("%d orphans left\n", childrenOf(reaper, os.Getpid()))
	return 1
}

// childrenOf counts the processes, zombies included, whose parent is pid,
// but for except (/proc/self and /proc/thread-self are except too).
func childrenOf(pid, except int) int {
	ents, _ := os.ReadDir("/proc")
	n, want := 0, strconv.Itoa(pid)
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err != nil || id == except {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == want {
			n++
		}
	}
	return n
}

// tty: reports what an interactive main sees of its terminal, then prints
// the size again at every SIGWINCH. It does not catch SIGINT, so Ctrl-C
// kills it (exit 130 from its parent's point of view).
func ttyProg([]string) int {
	fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	if err != nil {
		fmt.Println("no terminal:", err)
		return 1
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	fmt.Printf("foreground=%v size=%s TERM=%s\r\n", fg == unix.Getpgrp(), size(), os.Getenv("TERM"))
	fmt.Printf("ignored-self=%s ignored-pid1=%s\r\n", sigIgn("self"), sigIgn("1"))
	for range winch {
		fmt.Printf("resized %s\r\n", size())
	}
	return 0
}

func size() string {
	ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%dx%d", ws.Col, ws.Row)
}

// sigIgn names SIGTSTP, SIGTTIN and SIGTTOU when /proc/PID/status says
// they are ignored.
func sigIgn(pid string) string {
	b, _ := os.ReadFile("/proc/" + pid + "/status")
	mask, ok := SigMask(string(b), "SigIgn")
	if !ok {
		return "unknown"
	}
	var out []string
	for _, s := range []syscall.Signal{syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU} {
		if mask&(1<<(uint(s)-1)) != 0 {
			out = append(out, unix.SignalName(s))
		}
	}
	if out == nil {
		return "none"
	}
	return strings.Join(out, ",")
}

// gateway DIR: a fake hermes gateway for profile dir DIR (SPEC §1): it
// records gateway_state running in DIR/gateway_state.json (keeping the
// desired_state others wrote), prints "gateway up", and on SIGTERM records
// stopped and exits 0 when DIR/.gateway-planned-stop.json names its pid,
// else records running and exits 143 (the container is going down).
func gateway(a []string) int {
	dir := a[0]
	state := filepath.Join(dir, "gateway_state.json")
	write := func(s string) {
		m := map[string]any{}
		if b, err := os.ReadFile(state); err == nil {
			json.Unmarshal(b, &m)
		}
		m["gateway_state"], m["pid"] = s, os.Getpid()
		b, _ := json.Marshal(m)
		os.WriteFile(state+".tmp", b, 0o644)
		os.Rename(state+".tmp", state)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	write("running")
	fmt.Println("gateway up")
	<-term
	var marker struct {
		TargetPID int `json:"target_pid"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".gateway-planned-stop.json")); err == nil &&
		json.Unmarshal(b, &marker) == nil && marker.TargetPID == os.Getpid() {
		write("stopped")
		fmt.Println("gateway stopped on request")
		return 0
	}
	write("running")
	fmt.Println("gateway interrupted")
	return 143
}

// session: prints whether it leads its own session and process group, and
// what its stdin is, then exits 0.
func session([]string) int {
	sid, _ := unix.Getsid(0)
	stdin, _ := os.Readlink("/proc/self/fd/0")
	fmt.Printf("session-leader=%v group-leader=%v stdin=%s fds=%s\n",
		sid == os.Getpid(), unix.Getpgrp() == os.Getpid(), stdin, inheritedFDs())
	return 0
}

// leave-fd FD PIDFILE: starts "sleep inf" in a session of its own (out of
// reach of a kill of this process's group) holding its stdout, stderr and
// descriptors 3 to FD, writes that child's pid to PIDFILE, then exits 1.
func leaveFD(a []string) int {
	c := exec.Command(Command("sleep", "inf")[0], Command("sleep", "inf")[1:]...)
	c.Env = append(os.Environ(), Env())
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	fd := atoi(a[0])
	for i := 3; i <= fd; i++ {
		c.ExtraFiles = append(c.ExtraFiles, os.NewFile(uintptr(i), "fd"))
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := os.WriteFile(a[1], []byte(strconv.Itoa(c.Process.Pid)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 1
}

// inheritedFDs lists this process's descriptors except those the Go
// runtime opens itself (epoll and eventfd of its netpoller, the cgroup CPU
// limit files it watches) and the one reading /proc/self/fd.
func inheritedFDs() string {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return err.Error()
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []string
	for _, n := range names {
		target, _ := os.Readlink("/proc/self/fd/" + n)
		if strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/sys/fs/cgroup/") ||
			n == strconv.Itoa(int(d.Fd())) {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
