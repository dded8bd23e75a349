// Package s6cmd is the s6 command set hermes calls (s6-svc, s6-svstat,
// s6-svscanctl, s6-svwait, s6-setuidgid, s6-log), as multi-call names of
// hsvc (SPEC §8). Each command is a thin translation of s6's flags, output
// and exit codes onto hinit's control protocol: nothing here supervises.
// A service is addressed by its dir, and <scandir>/NAME is service NAME.
package s6cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"hinit/control"
	"hinit/s6dir"
)

// Exit codes s6's tools use.
const (
	exitOK      = 0
	exitFalse   = 1   // a negative answer (s6-svstat of an unsupervised dir)
	exitTimeout = 99  // a wait ran out
	exitUsage   = 100 // bad usage, or no supervisor for the dir
	exitSystem  = 111 // a system call failed, permission denied included
)

// commands maps each s6 name to its implementation.
var commands = map[string]func(e *env, args []string) int{
	"s6-svc":       runSvc,
	"s6-svstat":    runSvstat,
	"s6-svscanctl": runSvscanctl,
	"s6-svwait":    runSvwait,
	"s6-setuidgid": runSetuidgid,
	"s6-log":       runLog,
}

// Is reports whether name (argv[0]'s base name) is one of the s6 commands.
func Is(name string) bool {
	_, ok := commands[name]
	return ok
}

// Main runs the s6 command name with args (without argv[0]) and returns its
// exit code. cmd/hsvc calls it when Is(name).
func Main(name string, args []string, stdout, stderr io.Writer) int {
	e := &env{prog: name, ctx: context.Background(), stdout: stdout, stderr: stderr,
		sock: control.SocketPath(os.Getenv), now: time.Now}
	return commands[name](e, args)
}

// env is one run of an s6 command, with what it touches outside itself.
type env struct {
	prog           string
	ctx            context.Context
	stdout, stderr io.Writer
	sock           string
	now            func() time.Time
}

// fatal prints s6's one error line and returns code.
func (e *env) fatal(code int, format string, a ...any) int {
	fmt.Fprintf(e.stderr, "%s: fatal: %s\n", e.prog, fmt.Sprintf(format, a...))
	return code
}

// usage prints s6's usage line and returns exitUsage.
func (e *env) usage(synopsis string) int {
	fmt.Fprintf(e.stderr, "%s: usage: %s %s\n", e.prog, e.prog, synopsis)
	return exitUsage
}

// serviceName is the service a dir stands for: its base name, a relative
// dir taken from the working dir (`s6-svc -d .` from a run or finish
// script, which runs in its service's dir).
func serviceName(dir string) string {
	return filepath.Base(absDir(dir))
}

// absDir is dir made absolute and clean (as given, cleaned, when the
// working dir cannot be known).
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return filepath.Clean(dir)
}

// errNoSupervisor: hinit does not supervise the dir (or is not there).
var errNoSupervisor = errors.New("supervisor not listening")

// errDenied: the caller may not act on the service, as the system says
// it (errText prints "Permission denied", as s6 does).
var errDenied error = syscall.EACCES

// call sends req to hinit. Talking failures and refusals come back as
// errNoSupervisor, errDenied, or the error as it is; a response with
// another non-zero code is returned for the caller to judge.
func (e *env) call(req *control.Request) (*control.Response, error) {
	c, err := control.Dial(e.sock)
	switch {
	case errors.Is(err, control.ErrPermission):
		return nil, errDenied
	case errors.Is(err, control.ErrUnreachable):
		return nil, errNoSupervisor
	case err != nil:
		return nil, err
	}
	defer c.Close()
	resp, err := c.Do(e.ctx, req)
	switch {
	case err != nil:
		return nil, err
	case resp.Code == control.CodePermission:
		return nil, errDenied
	case resp.Code == control.CodeNoService:
		return nil, errNoSupervisor
	}
	return resp, nil
}

// status fetches the status of the service of dir.
func (e *env) status(dir string) (*control.Status, error) {
	resp, err := e.call(&control.Request{Verb: control.VerbStatus, Names: []string{serviceName(dir)}})
	if err != nil {
		return nil, err
	}
	if !resp.OK || len(resp.Services) != 1 {
		return nil, fmt.Errorf("%s", resp.Error)
	}
	return &resp.Services[0], nil
}

// checkDir fails like s6 when dir cannot be looked at.
func checkDir(dir string) error {
	_, err := dirID(dir)
	return err
}

// dirID is dir's identity (following a symlink, as s6 opens a path), or
// the error as s6 prints it: the system's, without the path.
func dirID(dir string) (*control.DirID, error) {
	fi, err := os.Stat(dir)
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, pe.Err
	}
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, errors.New("no device and inode")
	}
	return &control.DirID{Dev: st.Dev, Ino: st.Ino}, nil
}

// isStatic reports whether dir, which does not exist, names a static
// service of hinit.yaml in the scandir (/run/service/dashboard): s6-overlay
// linked its s6-rc longruns there, and operators' `s6-svc -r
// /run/service/dashboard` keeps working.
func (e *env) isStatic(dir string) bool {
	if filepath.Dir(absDir(dir)) != filepath.Clean(control.Scandir(os.Getenv)) {
		return false
	}
	st, err := e.status(dir)
	return err == nil && st.Source == "static"
}

// errText is err as s6 prints it: the C library's message, capitalised.
// hinit's own messages are left as they are: they begin with a service's
// name ("gateway-u0: ..."), which was shown as "Gateway-u0".
func errText(err error) string {
	s := err.Error()
	var errno syscall.Errno
	if s == "" || !errors.As(err, &errno) || s != errno.Error() {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// opt is one parsed option: the letter and, for options taking one, its
// value.
type opt struct {
	c   byte
	val string
}

// getopt parses args as POSIX getopt(3) does with the letters of flags;
// those in withValue take a value (attached or the next word). It returns
// the options, the operands, and false on an unknown or incomplete option.
func getopt(args []string, flags, withValue string) ([]opt, []string, bool) {
	var opts []opt
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return opts, args[1:], true
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		args = args[1:]
		for i := 1; i < len(a); i++ {
			c := a[i]
			switch {
			case strings.IndexByte(withValue, c) >= 0:
				v := a[i+1:]
				if v == "" {
					if len(args) == 0 {
						return nil, nil, false
					}
					v, args = args[0], args[1:]
				}
				opts = append(opts, opt{c, v})
				i = len(a)
			case strings.IndexByte(flags, c) >= 0:
				opts = append(opts, opt{c: c})
			default:
				return nil, nil, false
			}
		}
	}
	return opts, args, true
}

// neverReady reports whether a wait for until on dir can never end: a wait
// for ready on a dir that is never ready (readyAsHinitSays).
func neverReady(dir, until string) bool {
	return until == control.UntilReady && !readyAsHinitSays(dir)
}

// readyAsHinitSays reports whether the service of dir is ready when hinit
// says it is, the one rule of s6-svstat, s6-svwait and s6-svc -w: s6 marks
// a service ready only through its notification-fd, and an s6 dir without
// one never is (s6-svstat -o ready says false, and s6's s6-svwait -U times
// out), however hinit sees the service. An s6 dir is one with a run file
// and no service.yaml (the scandir reads service.yaml first): a static
// service of hinit.yaml (no dir) and a service.yaml dir are ready as hinit
// says, by their ready: key.
func readyAsHinitSays(dir string) bool {
	s6 := fileExists(dir, s6dir.RunFile) && !fileExists(dir, s6dir.DefinitionFile)
	return !s6 || fileExists(dir, s6dir.NotificationFile)
}

// fileExists reports whether dir/name exists (a symlink counts as itself).
func fileExists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}
