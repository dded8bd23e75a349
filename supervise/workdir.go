package supervise

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"hinit/account"
	"hinit/asuser"
	"hinit/config"
)

// startFailure says why the start of def failed. A workdir the service's
// user may not enter fails in the child's chdir, after the switch to that
// user, with the errno an exec would give: so on such an errno the workdir
// is tried again as that user, and blamed when it is the cause, rather than
// the program.
func (r *runner) startFailure(def *config.Service, dir string, acct *account.Account, err error) error {
	if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
		if derr := r.enter(dir, acct); derr != nil {
			return fmt.Errorf("workdir %s: user %s cannot enter it: %w", dir, acct.Name, derr)
		}
	}
	return fmt.Errorf("exec %s: %w", def.Command[0], err)
}

// enter resolves dir/. with the rights the service runs with, which needs
// the search permission chdir needs.
func (r *runner) enter(dir string, acct *account.Account) error {
	stat := func() error {
		var st unix.Stat_t
		return unix.Stat(dir+"/.", &st)
	}
	if r.credential(acct) == nil {
		return stat() // nothing is switched: the service has hinit's rights
	}
	return asuser.Do(asuser.ID{UID: acct.UID, GID: acct.GID, Groups: acct.Groups}, stat)
}
