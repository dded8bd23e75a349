package hsvc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"hinit/capset"
	"hinit/control"
)

// errHelp: the verb was asked for its usage (-h, --help).
var errHelp = errors.New("help requested")

// exitError is an error with the exit code hsvc ends with.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitf is an error that makes hsvc exit with code.
func exitf(code int, format string, a ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, a...)}
}

// usageError is exit code 2, for a command line hsvc cannot run.
func usageError(format string, a ...any) error {
	return exitf(control.CodeUsage, format, a...)
}

// usageErr is a usage error of the current verb, with its synopsis as the
// hint.
func (c *cli) usageErr(format string, a ...any) error {
	return exitf(control.CodeUsage, "%s; usage: %s", fmt.Sprintf(format, a...), c.usage)
}

// talkError turns a failure to talk to hinit into what the user can do
// about it.
func (c *cli) talkError(err error) error {
	var readOnly string // the read-only dir a missing socket is in
	if errors.Is(err, control.ErrUnreachable) {
		readOnly = readOnlyDir(c.sock)
	}
	switch {
	case errors.Is(err, control.ErrPermission) && os.Geteuid() == 0 && !hasDACOverride():
		// root refused: hinit runs as another user (--user) and root
		// lacks CAP_DAC_OVERRIDE (--cap-drop ALL)
		return exitf(control.CodePermission, "permission denied on %s: it is not root's and root has no CAP_DAC_OVERRIDE here; run hsvc as its owner or a member of group %s (docker exec -u)", c.sock, socketGroup(c.sock))
	case errors.Is(err, control.ErrPermission):
		return exitf(control.CodePermission, "permission denied on %s: run hsvc as a member of group %s or as root", c.sock, socketGroup(c.sock))
	case errors.Is(err, control.ErrUnreachable) && c.bare != nil && c.bare():
		return exitf(control.CodeUnreachable, "hinit runs without a control socket: no hinit.yaml (%s); services and hsvc need one", control.DefaultConfig)
	case readOnly != "":
		return exitf(control.CodeUnreachable, "hinit has no control socket at %s: %s is read-only; mount a tmpfs on it (docker run --tmpfs /run)",
			c.sock, readOnly)
	case errors.Is(err, control.ErrUnreachable):
		return exitf(control.CodeUnreachable, "hinit is not reachable at %s: is hinit running as PID 1 of this container?", c.sock)
	case errors.Is(err, context.DeadlineExceeded):
		return exitf(control.CodeTimeout, "hinit did not answer in time: it may be stuck; see its log (docker logs)")
	case errors.Is(err, context.Canceled):
		return exitf(control.CodeFailed, "interrupted")
	}
	return exitf(control.CodeFailed, "talk to hinit at %s: %v; retry, or see hinit's log", c.sock, err)
}

// socketGroup names the group that owns the socket, for the permission
// hint.
func socketGroup(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "of the socket"
	}
	gid := strconv.Itoa(int(st.Sys().(*syscall.Stat_t).Gid))
	if g, err := user.LookupGroupId(gid); err == nil {
		return g.Name
	}
	return gid
}

// readOnlyDir is, for a socket that is not there, the first dir that
// exists of its dir and their parents when it is on a read-only file system
// ("" otherwise): a socket missing because hinit could not make its runtime
// dir (docker run --read-only without a tmpfs on /run) is no question of
// hinit being PID 1. A socket that is there says nothing of the kind.
func readOnlyDir(sock string) string {
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	for dir := filepath.Dir(sock); ; dir = filepath.Dir(dir) {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		switch {
		case err == nil && st.Flags&unix.ST_RDONLY != 0:
			return dir
		case err == nil || !errors.Is(err, unix.ENOENT) || dir == filepath.Dir(dir):
			return ""
		}
	}
}

// hasDACOverride reports whether this process may pass file permission
// checks (CAP_DAC_OVERRIDE in its effective set); true when that cannot be
// read, so that only a known lack is named.
func hasDACOverride() bool {
	eff, err := capset.Effective()
	return err != nil || eff&(1<<unix.CAP_DAC_OVERRIDE) != 0
}
