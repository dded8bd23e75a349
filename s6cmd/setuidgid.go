package s6cmd

import (
	"os"

	"hinit/account"
	"hinit/launch"
)

// runSetuidgid is s6-setuidgid ACCOUNT PROG...: exec PROG with the uid, gid
// and supplementary groups of ACCOUNT (those the container gave hinit
// included, when root calls it), its environment untouched (as s6's).
// A caller that already is ACCOUNT (the hermes user) just execs, where s6
// would fail on setgroups. Who PROG runs as and how it is found are
// package launch's, as for every program hinit starts.
func runSetuidgid(e *env, args []string) int {
	if len(args) < 2 {
		return e.usage("username prog...")
	}
	if os.Getuid() == 0 {
		// Root here is hinit's, in a boot hook or a root service, with the
		// groups the container gave hinit (--group-add): ACCOUNT keeps
		// them, as it does when hinit starts it.
		account.KeepStartedGroups()
	}
	acct, err := account.Lookup(args[0])
	if err != nil {
		e.prog = "s6-envuidgid"
		return e.fatal(exitFalse, "unknown user: %s", args[0])
	}
	if os.Getuid() != acct.UID || os.Getuid() == 0 {
		if err := launch.Become(acct); err != nil {
			e.prog = "s6-applyuidgid"
			return e.fatal(exitSystem, "unable to %s", errText(err))
		}
	}
	cmd, err := launch.Program{Argv: args[1:], Env: launch.ProcessEnv(), RootsPATH: acct.UID == 0}.Build()
	if err == nil {
		err = cmd.Exec()
	}
	return e.fatal(launch.ExitCode(err), "unable to exec %s: %s", args[1], errText(err))
}
