package s6cmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"hinit/account"
)

// runSetuidgid is s6-setuidgid ACCOUNT PROG...: exec PROG with the uid, gid
// and supplementary groups of ACCOUNT. A caller that already is ACCOUNT
// (the hermes user) just execs, where s6 would fail on setgroups.
func runSetuidgid(e *env, args []string) int {
	if len(args) < 2 {
		return e.usage("username prog...")
	}
	acct, err := account.Lookup(args[0])
	if err != nil {
		e.prog = "s6-envuidgid"
		return e.fatal(exitFalse, "unknown user: %s", args[0])
	}
	if os.Getuid() != acct.UID || os.Getuid() == 0 {
		if err := setIDs(acct); err != nil {
			e.prog = "s6-applyuidgid"
			return e.fatal(exitSystem, "%s", err)
		}
	}
	path, err := lookPath(args[1])
	if err != nil {
		return e.fatal(127, "unable to exec %s: %s", args[1], errText(err))
	}
	err = syscall.Exec(path, args[1:], os.Environ())
	code := 126
	if err == syscall.ENOENT {
		code = 127
	}
	return e.fatal(code, "unable to exec %s: %s", args[1], errText(err))
}

// setIDs switches every thread of the process to acct.
func setIDs(acct *account.Account) error {
	if err := syscall.Setgroups(acct.Groups); err != nil {
		return wrapf("unable to set supplementary group list", err)
	}
	if err := syscall.Setgid(acct.GID); err != nil {
		return wrapf("unable to setgid", err)
	}
	if err := syscall.Setuid(acct.UID); err != nil {
		return wrapf("unable to setuid", err)
	}
	return nil
}

// wrapf is err after what, in s6's words.
func wrapf(what string, err error) error {
	return fmt.Errorf("%s: %s", what, errText(err))
}

// lookPath finds prog on $PATH, as execvp does.
func lookPath(prog string) (string, error) {
	p, err := exec.LookPath(prog)
	if errors.Is(err, exec.ErrNotFound) {
		return "", syscall.ENOENT
	}
	return p, err
}
