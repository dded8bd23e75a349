package pid1

import (
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"hinit/account"
	"hinit/config"
	"hinit/reaper"
	"hinit/supervise"
)

// mainProc is the container's main program: the container lives as long as
// it does and exits with its status.
type mainProc struct {
	argv []string
	pid  int
	done <-chan reaper.Status
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
		if _, err := supervise.LookPath(first, env); err == nil {
			return args
		}
	}
	return append(slices.Clone(m.Wrap), args...)
}

// startMain starts main in the container environment, completed with
// main.env and the HOME, USER and LOGNAME of main's user. With a terminal
// on stdin, main gets its own process group, made the terminal's foreground
// group (the child does it between fork and exec, with signals blocked, so
// no SIGTTOU can stop it); without one it still gets its own group so that
// shutdown can kill all of it.
func (h *hinit) startMain(argv []string, container map[string]string) (*mainProc, error) {
	env := maps.Clone(container)
	for k, v := range h.set.cfg.Main.Env {
		env[k] = config.Expand(v, container)
	}
	cred, err := h.mainCredential(env)
	if err != nil {
		return nil, err
	}
	path, err := supervise.LookPath(argv[0], env)
	if err != nil {
		return nil, err
	}
	dir := config.Expand(h.set.cfg.Main.Workdir, env)
	if h.tty {
		waitForSize(0, 250*time.Millisecond)
	}
	sys := &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if h.tty {
		sys.Foreground, sys.Ctty = true, 0
	}
	attr := &syscall.ProcAttr{Dir: dir, Env: supervise.EnvList(env), Files: []uintptr{0, 1, 2}, Sys: sys}
	pid, done, err := h.reaper.Start(path, argv, attr)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	return &mainProc{argv: argv, pid: pid, done: done}, nil
}

// mainCredential is who main runs as: main.user, else the image's user,
// when hinit is root. Not root: nothing is switched and nothing fails.
// HOME, USER and LOGNAME follow the user main runs as.
func (h *hinit) mainCredential(env map[string]string) (*syscall.Credential, error) {
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
	for k, v := range acct.Env() {
		env[k] = v
	}
	return supervise.Credential(acct), nil
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

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
