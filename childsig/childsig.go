// Package childsig is the one rule for the signal state hinit's children
// start with: the signal mask and the ignored dispositions, what tini calls
// its sigconf.
//
// tini gives its child exactly the mask and the ignored signals it
// inherited: a `nohup` or a CI runner that starts the init with SIGINT
// ignored and SIGTERM blocked starts main that way too. A Go program cannot
// do that by itself. Before its first instruction the runtime has unblocked
// HUP, INT, QUIT, ILL, TRAP, ABRT, BUS, FPE, SEGV, TERM, STKFLT, CHLD, PROF,
// SYS, URG and signals 32 to 34 on every thread and put its own handler over most ignored
// signals, keeping what it replaced in two variables no Go code may name:
// runtime.initSigmask (the mask the process started with) and runtime.fwdSig
// (the handler each signal had). Inherited reads both, once, in this
// package's init, before main changes any disposition (no package of
// hinit does in its init; a Notify after an Ignore would write fwdSig
// again): the one place hinit reaches into the runtime, which is why hinit links with
// -checklinkname=0 (docs/decisions.md, "Inherited signals").
//
// A State is then carried to the child in two ways (reaper.Start):
//
//   - the mask: the fork copies the forking thread's mask into the child
//     and exec keeps it, so the fork runs on a locked thread whose mask is
//     set to the State's for the fork's length;
//   - the ignored signals: the fork resets every signal the runtime handles
//     to its default, and hinit handles the ones it forwards, so a child
//     that must ignore one of those (or must not ignore one hinit ignores)
//     goes through the shim: hinit's own binary, run as ShimName in the
//     forked child, sets the dispositions and the mask with raw system calls
//     and execs the program, reporting a failed exec on a pipe as the fork
//     itself would. Being a Go program, it opens /dev/null on a closed fd
//     0-2 (hinit never starts a program with one closed). Without such a signal (a container's init inherits
//     none) nothing of this costs anything.
package childsig

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Set is a set of signals 1-64: bit N-1 is signal N, as in the SigBlk and
// SigIgn lines of /proc/PID/status.
type Set uint64

// Of is the set of the given signals.
func Of(sigs ...syscall.Signal) Set {
	var s Set
	for _, n := range sigs {
		s |= bit(n)
	}
	return s
}

func bit(n syscall.Signal) Set {
	if n < 1 || n > 64 {
		return 0
	}
	return 1 << (uint(n) - 1)
}

// Has reports whether n is in s.
func (s Set) Has(n syscall.Signal) bool { return n >= 1 && n <= 64 && s&bit(n) != 0 }

// String lists the signals as numbers ("2,15"), "none" when empty.
func (s Set) String() string {
	var b strings.Builder
	for n := syscall.Signal(1); n <= 64; n++ {
		if s.Has(n) {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(n)))
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// State is the signal state a child starts with: these signals ignored,
// every other one at its default, and these blocked.
type State struct {
	Ignored Set
	Blocked Set
}

// Default is a clean start: no signal ignored, none blocked.
var Default State

// Runtime is the signals the Go runtime needs unblocked on the thread that
// forks, whatever the child is to have blocked: SIGURG preempts the
// goroutine and signal 33 runs a system call on every thread (setuid and
// friends), which would wait for ever on a thread that blocks it. They are
// never blocked in a child (docs/tini.md says so).
const Runtime = Set(1<<(syscall.SIGURG-1) | 1<<(33-1))

// ShimName is argv[0] of hinit's own binary run as the shim: argv is then
// ShimName, the ignored set, the blocked set, the error fd, who to become
// and the dir to enter ("" for neither), the program's path and its argv
// (see ShimArgs).
const ShimName = "hinit-sigexec"

// ShimArgs is the argv of the shim that starts path with argv in state st,
// reporting a failed exec (or a failed switch to cred, or chdir to dir) on
// the shim's descriptor fd. With cred, the shim is forked as root and
// becomes cred itself, then enters dir: until it does, the user it becomes
// cannot stop it, and it is awaited without the reaper's lock from then on.
func ShimArgs(st State, fd int, cred *syscall.Credential, dir, path string, argv []string) []string {
	return append([]string{ShimName, strconv.FormatUint(uint64(st.Ignored), 16),
		strconv.FormatUint(uint64(st.Blocked), 16), strconv.Itoa(fd), formatCred(cred), dir, path}, argv...)
}

// formatCred is cred as the shim reads it: "uid:gid:group,group...", with
// "-" for groups when they are not to be set; "" for none.
func formatCred(cred *syscall.Credential) string {
	if cred == nil {
		return ""
	}
	groups := "-"
	if !cred.NoSetGroups {
		gs := make([]string, len(cred.Groups))
		for i, g := range cred.Groups {
			gs[i] = strconv.FormatUint(uint64(g), 10)
		}
		groups = strings.Join(gs, ",")
	}
	return fmt.Sprintf("%d:%d:%s", cred.Uid, cred.Gid, groups)
}

// parseCred reads formatCred back.
func parseCred(s string) (*syscall.Credential, bool) {
	if s == "" {
		return nil, true
	}
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return nil, false
	}
	uid, err1 := strconv.ParseUint(f[0], 10, 32)
	gid, err2 := strconv.ParseUint(f[1], 10, 32)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	c := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: f[2] == "-"}
	if !c.NoSetGroups && f[2] != "" {
		for _, g := range strings.Split(f[2], ",") {
			n, err := strconv.ParseUint(g, 10, 32)
			if err != nil {
				return nil, false
			}
			c.Groups = append(c.Groups, uint32(n))
		}
	}
	return c, true
}

// shimCall is what ShimArgs asked of a shim.
type shimCall struct {
	st   State
	fd   int
	cred *syscall.Credential
	dir  string
	path string
	argv []string
}

// parseShim reads ShimArgs back.
func parseShim(args []string) (c shimCall, err error) {
	if len(args) < 8 || args[0] != ShimName {
		return c, fmt.Errorf("usage: %s IGNORED BLOCKED FD CRED DIR PATH ARGV0 [ARG...]", ShimName)
	}
	ign, err1 := strconv.ParseUint(args[1], 16, 64)
	blk, err2 := strconv.ParseUint(args[2], 16, 64)
	fd, err3 := strconv.Atoi(args[3])
	cred, ok := parseCred(args[4])
	if err1 != nil || err2 != nil || err3 != nil || fd < 3 || !ok {
		return c, fmt.Errorf("%s: bad arguments %q", ShimName, args[1:5])
	}
	return shimCall{State{Ignored: Set(ign), Blocked: Set(blk)}, fd, cred, args[5], args[6], args[7:]}, nil
}

// init runs the shim when this binary was started as one, and never
// returns then. The shim needs nothing that Inherited captures.
func init() {
	if len(os.Args) > 0 && os.Args[0] == ShimName {
		os.Exit(shim(os.Args))
	}
}

// shim becomes the user asked and enters the dir, as a fork with a
// Credential and a Dir would (groups, gid, uid, then the dir, with the
// user's rights), sets the state and execs the program. Right before the
// exec it writes ShimReady to the error fd, and a failure of any of these
// steps is written there as the errno's 4 bytes (what the parent's Start
// returns), after which the shim exits 127 (ShimOutcome reads them).
func shim(args []string) int {
	c, err := parseShim(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	syscall.CloseOnExec(c.fd)
	// execIn locks the thread for the exec; the first lock starts the
	// runtime's template thread. Started here, before the shim becomes
	// the user: a user at its process limit (RLIMIT_NPROC) made that
	// clone fail, and the runtime died with a goroutine dump into the
	// service's log, where now the exec fails with EAGAIN, one errno.
	runtime.LockOSThread()
	errno := become(c.cred, c.dir)
	if errno == 0 {
		errno = execIn(c.st, c.path, c.argv, os.Environ(), func() { syscall.Write(c.fd, []byte{ShimReady}) })
	}
	b := [4]byte{byte(errno), byte(errno >> 8), byte(errno >> 16), byte(errno >> 24)}
	syscall.Write(c.fd, b[:])
	return 127
}

// become switches every thread of the shim to cred (when set) and enters
// dir (when set).
func become(cred *syscall.Credential, dir string) syscall.Errno {
	errno := func(err error) syscall.Errno {
		if e, ok := err.(syscall.Errno); ok {
			return e
		}
		return syscall.EINVAL
	}
	if cred != nil {
		if !cred.NoSetGroups {
			groups := make([]int, len(cred.Groups))
			for i, g := range cred.Groups {
				groups[i] = int(g)
			}
			if err := syscall.Setgroups(groups); err != nil {
				return errno(err)
			}
		}
		if err := syscall.Setgid(int(cred.Gid)); err != nil {
			return errno(err)
		}
		if err := syscall.Setuid(int(cred.Uid)); err != nil {
			return errno(err)
		}
	}
	if dir != "" {
		if err := syscall.Chdir(dir); err != nil {
			return errno(err)
		}
	}
	return 0
}

// Exec replaces this process with path, started in state st, as the shim
// does: for a program hinit execs instead of forking (with-contenv,
// s6-setuidgid). It returns only when the exec failed, with the dispositions
// and the calling thread's mask already changed: the caller reports the
// error and exits.
func Exec(st State, path string, argv, env []string) error {
	return execIn(st, path, argv, env, nil)
}

// ShimReady is the byte the shim writes to its error fd right before its
// exec: without it, a shim that ended wrote nothing because it never got
// that far (its own Go runtime could not start a thread under a pids
// limit, say), not because its exec succeeded.
const ShimReady = 0xff

// ErrShimEnded is a shim that ended before its exec.
var ErrShimEnded = errors.New("the start shim (hinit's own binary) ended before it could exec the program (out of pids or memory?)")

// ShimOutcome reads what the shim wrote on its error fd, to its end: nil
// when it exec'd the program, the errno of the step that failed, or
// ErrShimEnded.
func ShimOutcome(b []byte) error {
	ready := len(b) > 0 && b[0] == ShimReady
	if ready {
		b = b[1:]
	}
	switch {
	case len(b) >= 4:
		return syscall.Errno(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
	case !ready:
		return ErrShimEnded
	}
	return nil
}
