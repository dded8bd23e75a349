// Package launch is the one builder of how hinit starts a program: a
// service, the main program, a boot hook, or with-contenv's command. It
// decides who the program runs as (uid, gid, supplementary groups), its
// environment, its working dir, its session or process group, its terminal,
// the signal state it starts with, and what exit status a program that
// cannot run gets. It forks
// nothing itself: the Cmd it builds goes to reaper.Start, the only place
// hinit forks (or to Cmd.Exec for with-contenv and s6-setuidgid).
//
// # Environment precedence
//
// Later layers win:
//
//  1. the base environment: hinit's own, plus env: of hinit.yaml;
//  2. the container environment dir ($HINIT_RUNTIME_DIR/env) as the boot
//     hooks left it, which replaces 1 when it can be read;
//  3. HOME, USER and LOGNAME of the account the program runs as;
//  4. the definition's own env: (a service's env:, main.env), which wins
//     over everything, HOME included.
//
// Layers 1 and 2 are the caller's Env (the container environment), layer 3
// comes from Program.User, layer 4 is Program.Own.
package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"hinit/account"
	"hinit/asuser"
	"hinit/childsig"
	"hinit/trust"
)

// Session says what session and process group a program gets.
type Session int

// Sessions.
const (
	// NewSession: a session of its own (setsid), so it never gets the
	// terminal: services.
	NewSession Session = iota
	// NewGroup: a process group of its own in hinit's session, so that a
	// timeout or the shutdown kills all of it: boot hooks, main without a
	// terminal.
	NewGroup
	// Foreground: a process group of its own made the terminal's
	// foreground group (fd 0) by the child between fork and exec, with
	// signals blocked, so no SIGTTOU can stop it: main with a terminal.
	Foreground
)

// MaxFD is the highest descriptor a program is started with: the fork
// fills the child's descriptors up to it one by one, under the reaper's
// lock, and for a scandir service the hermes user picks it
// (ready.notify_fd, an s6 dir's notification-fd; 20,000,000 cost PID 1 a
// gigabyte and seconds per start). config and s6dir refuse a larger one,
// and supervise, which places the notify fd, does too. Below the common
// soft limit of 1024 descriptors, which the child could not exceed.
const MaxFD = 1023

// Program is what to start and how.
type Program struct {
	Argv []string
	// Env is the container environment (layers 1 and 2); it is not
	// modified.
	Env map[string]string
	// User is the account the program runs as; its HOME, USER and LOGNAME
	// are layer 3. Nil: hinit's own, and layer 3 is left out.
	User *account.Account
	// Switch sets the process's credentials to User's (hinit is root).
	Switch bool
	// Own is the definition's own env: (layer 4), already expanded.
	Own map[string]string
	// Workdir is where the program runs; it must be a directory. "" means
	// User's home when InHome (or / when that is missing), else hinit's own
	// working directory.
	Workdir string
	InHome  bool
	// RootsPATH: the program runs as root from a definition (a boot hook,
	// a service): its command is looked up in, and it gets, a PATH of the
	// dirs only root can change (trust.RootOnly). The hermes image's
	// holds /opt/data/.local/bin, a dir of the hermes user's volume: a
	// program planted there would run as root. Main keeps its PATH whole,
	// as under tini.
	RootsPATH bool
	// Files are the child's fds 0, 1, 2... (^uintptr(0): closed).
	Files   []uintptr
	Session Session
	// DefaultSignals starts the program with no signal ignored and none
	// blocked instead of what hinit inherited (childsig; a service's
	// signals: default).
	DefaultSignals bool
}

// Cmd is a built program: what reaper.Start takes.
type Cmd struct {
	Path    string // the executable, found on the program's own PATH
	Argv    []string
	Attr    *syscall.ProcAttr
	Signals childsig.State // the mask and ignored signals it starts with
}

// Build resolves the program's executable, environment and working dir.
// Its errors wrap ErrNotFound or the system's, for ExitCode. It runs quiet
// (asuser.Quiet): the dirs of PATH and the working dir can be on hermes'
// volume ($HERMES_HOME, ~/.local/bin), where a stat may hang.
func (p Program) Build() (cmd *Cmd, err error) {
	asuser.Quiet(func() { cmd, err = p.build() })
	if err != nil {
		return nil, err
	}
	if cmd.Attr.Dir, err = p.workdir(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// workdir is dir, looked at with the file rights the program will have
// (account.Do, quiet either way): a workdir the hermes user names in a
// service.yaml is what hermes could see of it. With root's rights, the
// reason told hermes whether a path in a dir it may not search (/root) was
// missing, a file or a dir.
func (p Program) workdir() (dir string, err error) {
	if p.Workdir == "" && (!p.InHome || p.User == nil) {
		return "", nil // hinit's own: nothing to look at
	}
	var who *account.Account // nil: hinit's own rights, quiet, with no turn of account.Do taken
	if p.Switch && p.User != nil && p.User.UID != 0 {
		who = p.User
	}
	err = account.Do(who, func() error {
		var derr error
		dir, derr = p.dir()
		return derr
	})
	return dir, err
}

func (p Program) build() (*Cmd, error) {
	if len(p.Argv) == 0 {
		return nil, errors.New("no command")
	}
	env := Environ(p.Env, p.User, p.Own)
	lookup := LookPath
	var left []leftOut
	if p.RootsPATH {
		lookup = rootLookPath
		left = rootsPath(env)
	}
	path, err := lookup(p.Argv[0], env)
	if errors.Is(err, ErrNotFound) {
		for _, l := range left { // say so when only a dir left out has it
			if fi, serr := os.Stat(filepath.Join(l.dir, p.Argv[0])); serr == nil && fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%q: %w (%s has it, but is left out of root's PATH: %v)", p.Argv[0], ErrNotFound, l.dir, l.why)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	sys := &syscall.SysProcAttr{}
	switch p.Session {
	case NewSession:
		sys.Setsid = true
	case NewGroup:
		sys.Setpgid = true
	case Foreground:
		sys.Setpgid, sys.Foreground, sys.Ctty = true, true, 0
	}
	if p.Switch && p.User != nil {
		sys.Credential = Credential(p.User)
	}
	attr := &syscall.ProcAttr{Env: EnvList(env), Files: p.Files, Sys: sys} // Dir: Build's
	sig := childsig.Inherited()
	if p.DefaultSignals {
		sig = childsig.Default
	}
	return &Cmd{Path: path, Argv: p.Argv, Attr: attr, Signals: sig}, nil
}

// Exec replaces this process with the program (with-contenv, s6-setuidgid),
// in its signal state; it returns only when the exec failed, and the caller
// then exits (childsig.Exec).
func (c *Cmd) Exec() error {
	return childsig.Exec(c.Signals, c.Path, c.Argv, c.Attr.Env)
}

// dir is the working dir of the program. A workdir it cannot use is
// exit status 126 whatever the reason (ExitCode: the program was found),
// and the reason is said: "no such file or directory" for a typo.
func (p Program) dir() (string, error) {
	if p.Workdir != "" {
		fi, err := os.Stat(p.Workdir)
		var pe *fs.PathError
		switch {
		case errors.As(err, &pe):
			return "", fmt.Errorf("workdir %s: %w", p.Workdir, workdirError{pe.Err})
		case err != nil:
			return "", fmt.Errorf("workdir %s: %w", p.Workdir, workdirError{err})
		case !fi.IsDir():
			return "", fmt.Errorf("workdir %s: %w", p.Workdir, workdirError{syscall.ENOTDIR})
		}
		return p.Workdir, nil
	}
	if !p.InHome || p.User == nil {
		return "", nil
	}
	if fi, err := os.Stat(p.User.Home); err == nil && fi.IsDir() {
		return p.User.Home, nil
	}
	return "/", nil
}

// workdirError is why a workdir cannot be used; it says the system's
// reason but does not unwrap to it, so that ExitCode does not take a
// missing workdir (ENOENT) for a missing program (127).
type workdirError struct{ err error }

func (e workdirError) Error() string { return e.err.Error() }

// Environ is the environment of a program (see the package comment for
// the precedence): container, then acct's HOME, USER and LOGNAME (when
// acct is not nil), then own.
func Environ(container map[string]string, acct *account.Account, own map[string]string) map[string]string {
	env := make(map[string]string, len(container)+len(own)+3)
	for k, v := range container {
		env[k] = v
	}
	if acct != nil {
		for k, v := range acct.Env() {
			env[k] = v
		}
	}
	for k, v := range own {
		env[k] = v
	}
	return env
}

// Credential is the process credential of a: uid, gid and supplementary
// groups.
func Credential(a *account.Account) *syscall.Credential {
	groups := make([]uint32, len(a.Groups))
	for i, g := range a.Groups {
		groups[i] = uint32(g)
	}
	return &syscall.Credential{Uid: uint32(a.UID), Gid: uint32(a.GID), Groups: groups}
}

// Become switches the calling process, every thread of it, to a's
// Credential, for a program it then starts with syscall.Exec (s6-setuidgid).
// Its errors name the step: setgroups, setgid or setuid.
func Become(a *account.Account) error {
	c := Credential(a)
	groups := make([]int, len(c.Groups))
	for i, g := range c.Groups {
		groups[i] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(int(c.Gid)); err != nil {
		return fmt.Errorf("setgid: %w", err)
	}
	if err := syscall.Setuid(int(c.Uid)); err != nil {
		return fmt.Errorf("setuid: %w", err)
	}
	return nil
}

// ProcessEnv is the calling process's own environment as a map, for a
// Program that keeps it (s6-setuidgid).
func ProcessEnv() map[string]string {
	m := make(map[string]string)
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// EnvList turns an environment map into sorted KEY=VALUE entries.
func EnvList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// ErrNotFound is returned when a command is not on PATH.
var ErrNotFound = errors.New("executable file not found in $PATH")

// LookPath finds file on the PATH of env (the program's, not hinit's). An
// empty name is found nowhere (127, as execvp says): joined to a PATH dir
// it named the dir itself, 126 "permission denied" (`tini -- "$CMD"` with
// CMD empty).
func LookPath(file string, env map[string]string) (string, error) {
	if file == "" {
		return "", fmt.Errorf("%q: %w", file, ErrNotFound)
	}
	if strings.Contains(file, "/") {
		return file, nil
	}
	path, ok := env["PATH"]
	if !ok {
		path = defaultPath
	}
	denied := ""
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
		if denied == "" {
			denied = p
		}
	}
	if denied != "" {
		// execvp's rule, and so tini's and a shell's: a file found but not
		// executable is 126 (permission denied), not 127.
		return "", &os.PathError{Op: "exec", Path: denied, Err: syscall.EACCES}
	}
	return "", fmt.Errorf("%q: %w", file, ErrNotFound)
}

// defaultPath is the PATH a program is looked up on when its environment
// has none, and root's PATH when its environment has none or none of its
// dirs is root's only: an empty or missing PATH is the working dir to a
// shell (bash's default ends in ".").
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// leftOut is a PATH dir left out for root, and why.
type leftOut struct {
	dir string
	why error
}

// rootsPath sets env's PATH to the dirs of it only root can change
// (trust.RootOnly), in order, and returns those it left out. With none
// left, or no PATH at all, it is the root dirs of defaultPath; with
// none of those either, a dir that does not exist, never an empty PATH.
func rootsPath(env map[string]string) []leftOut {
	v, ok := env["PATH"]
	if !ok {
		v = defaultPath
	}
	keep, left := rootDirs(v)
	if len(keep) == 0 {
		keep, _ = rootDirs(defaultPath)
	}
	if len(keep) == 0 {
		keep = []string{"/nonexistent"}
	}
	env["PATH"] = strings.Join(keep, ":")
	return left
}

// rootDirs splits the dirs of the PATH value v into those only root can
// change and the others.
func rootDirs(v string) (keep []string, left []leftOut) {
	for _, dir := range filepath.SplitList(v) {
		if ok, why := trust.RootOnly(dir); ok {
			keep = append(keep, dir)
		} else {
			left = append(left, leftOut{dir, why})
		}
	}
	return keep, left
}

// rootLookPath is LookPath for a program root runs, in a PATH rootsPath
// made: a file someone other than root can change (trust.RootProgram) is
// passed over. The error names the first one passed over, and why.
func rootLookPath(file string, env map[string]string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil // named by its path in a definition root wrote
	}
	var passed error
	for _, dir := range filepath.SplitList(env["PATH"]) {
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			continue
		}
		if why := trust.RootProgram(p); why != nil {
			if passed == nil {
				passed = fmt.Errorf("%s passed over, not root's only: %w", p, why)
			}
			continue
		}
		return p, nil
	}
	if passed != nil {
		return "", fmt.Errorf("%q: %w (%v)", file, ErrNotFound, passed)
	}
	return "", fmt.Errorf("%q: %w (root's PATH: %s)", file, ErrNotFound, env["PATH"])
}

// ExitCode is what a shell reports for a command it cannot run: 127 when
// it does not exist, 126 when it cannot be executed (or its working dir
// cannot be entered).
func ExitCode(err error) int {
	if errors.Is(err, ErrNotFound) || errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}

// StartError says why starting cmd (built from p) failed with err. A
// working dir the program's user may not enter fails in the child's chdir,
// after the switch to that user, with the errno an exec would give: on such
// an errno the dir is tried again with the program's rights and blamed when
// it is the cause, rather than the program.
func (p Program) StartError(cmd *Cmd, err error) error {
	if dir := cmd.Attr.Dir; dir != "" && (errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR)) {
		if derr := p.enter(dir); derr != nil {
			who := "hinit's own user"
			if p.User != nil {
				who = "user " + p.User.Name
			}
			return fmt.Errorf("workdir %s: %s cannot enter it: %w", dir, who, derr)
		}
	}
	if p.Switch && p.User != nil && errors.Is(err, syscall.EPERM) {
		// The child's setgroups, setgid or setuid, before the exec: what
		// docker's --cap-drop or a pod's securityContext took away.
		return fmt.Errorf("cannot run %s as user %s (%d:%d): %w: hinit needs CAP_SETUID and CAP_SETGID for that",
			p.Argv[0], p.User.Name, p.User.UID, p.User.GID, err)
	}
	return fmt.Errorf("exec %s: %w", p.Argv[0], err)
}

// enter resolves dir/. with the rights the program runs with, which needs
// the search permission chdir needs.
func (p Program) enter(dir string) error {
	stat := func() error {
		var st unix.Stat_t
		return unix.Stat(dir+"/.", &st)
	}
	user := p.User
	if !p.Switch {
		user = nil // nothing is switched: the program has hinit's rights
	}
	return account.Do(user, stat)
}
