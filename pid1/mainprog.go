package pid1

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"hinit/account"
	"hinit/asuser"
	"hinit/cgroup"
	"hinit/config"
	"hinit/launch"
	"hinit/reaper"
)

// mainProc is the container's main program: the container lives as long as
// it does and exits with its status.
type mainProc struct {
	argv []string
	pid  int
	done <-chan reaper.Status
	mark cgroup.Mark // the container cgroup's counts before its fork
	// killed: hinit sent it SIGKILL (the shutdown's deadline); set on the
	// shutdown's goroutine before the kill, read by loop after the reap.
	killed atomic.Bool
}

// deathCause is what the container's cgroup tells of main's exit st, ""
// when nothing: an OOM kill (a SIGKILL hinit did not send), or a non-zero
// exit code while the pids limit refused a new process or thread, unless
// the shutdown had begun (its code answers a signal). A death by another
// signal is not put down to the pids limit: it may be one hinit forwarded.
func (m *mainProc) deathCause(st reaper.Status, shuttingDown bool) string {
	switch {
	case m.mark.OOMKilled(st.Signal, m.killed.Load()):
		return "killed by SIGKILL, " + cgroup.OOMReason
	case st.Signal == 0 && m.mark.PidsLimited(st.Code, 0, shuttingDown):
		return fmt.Sprintf("exit %d, %s", st.Code, cgroup.PidsReason)
	}
	return ""
}

// routeMain turns the container's CMD into main's argv (SPEC §2): no CMD
// runs main.default; a first word that is an executable on PATH (or a path)
// and not in main.always_wrap runs as given; anything else is prefixed with
// main.wrap ("chat -q hi" becomes "hermes chat -q hi").
func routeMain(m config.Main, args []string, env map[string]string) []string {
	if len(args) == 0 {
		return slices.Clone(m.Default)
	}
	if len(m.Wrap) == 0 {
		return args
	}
	first := args[0]
	if !slices.Contains(m.AlwaysWrap, first) {
		if strings.Contains(first, "/") {
			return args
		}
		if _, err := launch.LookPath(first, env); err == nil {
			return args
		}
	}
	return append(slices.Clone(m.Wrap), args...)
}

// startMain starts main with the container environment, the HOME, USER
// and LOGNAME of main's user, then main.env (package launch's precedence:
// main.env wins). With a terminal on stdin, main gets its own process
// group made the terminal's foreground group; without one it still gets
// its own group so that shutdown can kill all of it. Main's user owns
// main's terminal while main runs (lendTerminal).
func (h *hinit) startMain(argv []string, container map[string]string) (*mainProc, error) {
	own := make(map[string]string, len(h.set.cfg.Main.Env))
	for k, v := range h.set.cfg.Main.Env {
		own[k] = config.Expand(v, container)
	}
	acct, err := h.mainUser()
	if err != nil {
		return nil, err
	}
	prog := launch.Program{Argv: argv, Env: container, User: acct, Switch: acct != nil, Own: own,
		Workdir: config.Expand(h.set.cfg.Main.Workdir, container), Files: h.mainFiles(), Session: launch.NewGroup}
	if h.tty {
		prog.Session = launch.Foreground
		waitForSize(0, 250*time.Millisecond)
	}
	cmd, err := prog.Build()
	if err != nil {
		return nil, err
	}
	if acct != nil {
		h.lent = lendTerminal(acct.UID)
	}
	var mark cgroup.Mark
	if !h.set.bare { // bare: nothing read that tini does not
		mark = cgroup.Container.Mark()
	}
	pid, done, err := h.reaper.Start(cmd.Path, cmd.Argv, cmd.Attr, cmd.Signals)
	script := false
	if errors.Is(err, syscall.ENOEXEC) {
		asuser.Quiet(func() { script = isScript(inDir(cmd.Attr.Dir, cmd.Path)) }) // main's file may be on hermes' volume
	}
	if script {
		// execvp's rule, and so tini's: a text file the kernel cannot
		// run (a script without a "#!" line) is a script for /bin/sh.
		sh := prog
		sh.Argv = append([]string{"/bin/sh", cmd.Path}, argv[1:]...)
		if shCmd, serr := sh.Build(); serr == nil {
			if pid, done, serr = h.reaper.Start(shCmd.Path, shCmd.Argv, shCmd.Attr, shCmd.Signals); serr == nil {
				return &mainProc{argv: argv, pid: pid, done: done, mark: mark}, nil
			}
		}
		// no /bin/sh to run it: main's own error says what is wrong
	}
	if err != nil {
		h.restoreTerminal() // the child made its group the foreground before its exec failed
		err = prog.StartError(cmd, err)
		return nil, mark.StartFailed(err, launch.ExitCode(err))
	}
	return &mainProc{argv: argv, pid: pid, done: done, mark: mark}, nil
}

// inDir is path as the child, started in dir, finds it.
func inDir(dir, path string) string {
	if dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// isScript reports whether the file at path, which the kernel refused to
// run, reads as a shell script: a regular file, not empty, not an ELF
// binary (one for another machine), no NUL byte in its first line (bash's
// test before it runs such a file: a payload may follow the script).
// Anything else stays main's exec error: 126, "exec format error". The
// path may have been swapped since the exec: the open neither waits for a
// FIFO's writer nor makes a terminal PID 1's (a session leader's)
// controlling terminal.
func isScript(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	b := make([]byte, 512)
	n, _ := f.Read(b)
	b = b[:n]
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	return n > 0 && !bytes.HasPrefix(b, []byte("\x7fELF")) && !bytes.Contains(line, []byte{0})
}

// mainFiles are main's descriptors: 0, 1 and 2, and those hinit was
// started with beyond them (reaper.Inherited), at their numbers, as tini's
// child gets them all (podman's --preserve-fds, `tini -- app 3<file`); the
// numbers between are closed in main. No service or hook gets them. One
// past launch.MaxFD is not passed on: each number up to it costs every
// start of main a descriptor slot. Nor is one within three of the
// descriptor limit: the fork moves its error pipe, and the shim's, past
// main's last number.
func (h *hinit) mainFiles() []uintptr {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil {
		rl.Max = ^uint64(0)
	}
	files := []uintptr{0, 1, 2}
	for _, fd := range h.reaper.Inherited() {
		why := ""
		switch {
		case fd > launch.MaxFD:
			why = fmt.Sprintf("past %d", launch.MaxFD)
		case uint64(fd)+3 >= rl.Max:
			why = fmt.Sprintf("too near the descriptor limit (%d) for the fork's own", rl.Max)
		}
		if why != "" {
			h.log.Warn(fmt.Sprintf("descriptor %d that hinit was started with is not passed to main: %s", fd, why))
			continue
		}
		for len(files) < fd {
			files = append(files, ^uintptr(0)) // closed in main
		}
		files = append(files, uintptr(fd))
	}
	return files
}

// mainUser is who main runs as: main.user, else the image's user, when
// hinit is root. Not root (or no user configured): nil, nothing is
// switched, and main keeps the HOME and USER the runtime gave it (docker
// takes them from /etc/passwd; a uid without an entry gets HOME=/, which
// a pod's own HOME overrides).
func (h *hinit) mainUser() (*account.Account, error) {
	spec := h.set.cfg.Main.User
	if spec == "" {
		spec = h.set.cfg.User
	}
	if !h.root || spec == "" {
		return nil, nil
	}
	acct, err := account.Lookup(spec)
	if err != nil {
		return nil, fmt.Errorf("main.user: %w", err)
	}
	return acct, nil
}

// waitForSize waits, up to max, for the terminal on fd to get a real size.
// docker run -it starts the container with a 0x0 terminal and sets the size
// some 20 ms later; a TUI that started at 0x0 lays itself out wrong.
func waitForSize(fd int, max time.Duration) {
	sized := func() bool {
		ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		return err != nil || ws.Row != 0 || ws.Col != 0
	}
	if sized() {
		return
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	timeout := time.NewTimer(max)
	defer timeout.Stop()
	for !sized() {
		select {
		case <-winch:
		case <-timeout.C:
			return
		}
	}
}

// restoreTerminal puts back the terminal as hinit found it, once main has
// exited: its owner (giveBackTerminal), its foreground group and its
// modes. Main's group is gone, and whoever reads the terminal next in
// hinit's session would get EIO (`hinit -- true; read x` in a script), or
// be stopped (a shell's job). A TUI killed in raw mode leaves no echo and
// no \r before \n, and hinit's held-back lines would run down the screen
// as a staircase; a shell does the same for a job killed in the
// foreground. hinit ignores SIGTTOU, so this works from outside the
// foreground group.
func (h *hinit) restoreTerminal() {
	h.giveBackTerminal()
	if !h.tty {
		return
	}
	if !holdsForeground(0) {
		if err := unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp()); err != nil {
			h.log.Debug("terminal's foreground not taken back", "err", err)
		}
	}
	if h.ttyModes == nil {
		return
	}
	if err := unix.IoctlSetTermios(0, unix.TCSETS, h.ttyModes); err != nil {
		h.log.Debug("terminal modes not restored", "err", err)
	}
}

// lentFD is a terminal on one of main's fds, and its owner, group and mode
// before main's user was made its owner (who may change the mode meanwhile).
type lentFD struct {
	fd, uid, gid int
	mode         uint32
}

// lendTerminal makes uid, main's user, the owner of the terminals on fds
// 0-2 (group and mode kept), as runc does for `docker run -u USER -it` and
// login(1) for a session: a program opens its own terminal by name
// (/dev/stdout, /dev/stderr, ttyname: `tee /dev/stderr`, gpg's pinentry),
// and the device's permission decides. A terminal that cannot be chowned
// (read-only /dev, an owner outside a user namespace) is left as it is,
// as runc leaves it. It returns what giveBackTerminal undoes.
func lendTerminal(uid int) []lentFD {
	var lent []lentFD
	for fd := 0; fd <= 2; fd++ {
		var st unix.Stat_t
		if !isTerminal(fd) || unix.Fstat(fd, &st) != nil || int(st.Uid) == uid {
			continue
		}
		if unix.Fchown(fd, uid, -1) == nil {
			lent = append(lent, lentFD{fd: fd, uid: int(st.Uid), gid: int(st.Gid), mode: st.Mode & 0o7777})
		}
	}
	return lent
}

// giveBackTerminal gives the terminals lendTerminal lent to main's user
// back to their owners, with the group and mode they had (main's user,
// as their owner, may have made them world-writable): after main, the
// terminal is not the user's (a nested hinit in someone's own terminal).
// What main's user typed into it (TIOCSTI) and nobody has read yet is
// thrown away, or the terminal's next reader, root's shell say, would run
// it; flushInput does so again at hinit's end, after what main left
// behind has been stopped.
func (h *hinit) giveBackTerminal() {
	if len(h.lent) > 0 {
		h.flushLent = true
	}
	for _, l := range h.lent {
		if err := unix.Fchown(l.fd, l.uid, l.gid); err != nil {
			h.log.Debug("terminal owner not given back", "fd", l.fd, "err", err)
		}
		if err := unix.Fchmod(l.fd, l.mode); err != nil {
			h.log.Debug("terminal mode not given back", "fd", l.fd, "err", err)
		}
	}
	h.lent = nil
	h.flushInput()
}

// flushInput throws away the input a terminal lent to main's user holds
// unread (giveBackTerminal).
func (h *hinit) flushInput() {
	if h.flushLent && isTerminal(0) {
		unix.IoctlSetInt(0, unix.TCFLSH, unix.TCIFLUSH)
	}
}

// terminalModes are the modes of the terminal on fd, nil when it has none.
func terminalModes(fd int) *unix.Termios {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil
	}
	return t
}

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// holdsForeground reports whether fd is hinit's controlling terminal and
// hinit's process group its foreground: a terminal whose foreground main
// can be given. tcgetpgrp fails with ENOTTY on any other terminal (hinit
// started by setsid, a terminal handed in from another session), where
// tini goes on without the handoff; and a background job (`hinit -- cmd &`
// in an interactive shell) must not take the terminal from the shell,
// which then read EIO and exited.
func holdsForeground(fd int) bool {
	pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// mainStopped answers a stop of main by SIGTSTP while main has the
// terminal, a Ctrl-Z: main is continued at once. Nothing else would
// continue it: as PID 1 (docker run -it IMAGE cat) the terminal stayed
// dead until a docker kill, and an init above hinit (docker run --init)
// or a shell waiting for hinit, not for main, never sees main stop. The
// Ctrl-Z does what it does to a program that is PID 1 itself, nothing.
// A stop by another signal (SIGSTOP, a read from the background) is left
// as it is: continuing a background reader would only stop it again, a
// loop; so is any stop without a terminal, which only kill(1) can have
// sent.
func (h *hinit) mainStopped(sig syscall.Signal) {
	if h.tty && sig == syscall.SIGTSTP {
		h.resumeMain()
	}
}
