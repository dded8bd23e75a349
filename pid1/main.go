package pid1

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"hinit/contenvd"
	"hinit/launch"

	"hinit/config"
)

// Version is hinit's version, set at build time with -ldflags "-X".
var Version = "dev"

const usage = `usage: hinit [--] [CMD [ARGS...]]
       hinit check-config [FILE]
       hinit with-contenv CMD [ARGS...]   (also as with-contenv)
       hinit --version | --help

As PID 1 every argument is the CMD's; the verbs are for docker exec.

hinit is the PID 1 and process supervisor of the Hermes Agent image. It runs
CMD as the container's main program (routed by main: in hinit.yaml), supervises
the services of hinit.yaml and of the scandir, reaps zombies, and exits with
main's exit status.

Environment: HINIT_CONFIG (default /etc/hinit/hinit.yaml), HINIT_RUNTIME_DIR
(/run/hinit), HINIT_SCANDIR (/run/service), HINIT_SHUTDOWN_TIMEOUT (8s),
HINIT_LOG_LEVEL (info).
`

// Main runs hinit with argv (os.Args: the container's CMD follows argv[0])
// and returns the process exit status. Called as with-contenv, it runs a
// command with the container environment instead.
func Main(argv []string) int {
	args := argv[1:]
	switch filepath.Base(argv[0]) {
	case "with-contenv":
		return withContenv(args)
	case "tini":
		args = dropTiniFlags(args)
	}
	if len(args) > 0 && os.Getpid() == 1 {
		// As the container's PID 1 every word is the CMD's, so that
		// `docker run IMAGE --version` reaches hermes: hinit's own verbs
		// are for docker exec (or after --).
		if args[0] == "--" {
			args = args[1:]
		}
		return boot(args)
	}
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-V":
			fmt.Println("hinit", Version)
			return 0
		case "--help", "-h":
			fmt.Print(usage)
			return 0
		case "check-config":
			return checkConfig(args[1:], os.Stdout, os.Stderr)
		case "with-contenv":
			return withContenv(args[1:])
		case "--":
			args = args[1:]
		}
	}
	return boot(args)
}

// checkConfig validates a configuration file: exit 0 when it is good, 1
// with one "file:line: problem" line each when it is not.
func checkConfig(args []string, stdout, stderr io.Writer) int {
	path := or(os.Getenv("HINIT_CONFIG"), DefaultConfig)
	if len(args) > 1 {
		fmt.Fprintln(stderr, "hinit: usage: hinit check-config [FILE]")
		return 2
	}
	if len(args) == 1 {
		path = args[0]
	}
	c, err := config.Load(path)
	if err != nil {
		if ce, ok := err.(*config.Error); ok {
			for _, l := range ce.Lines() {
				fmt.Fprintln(stderr, l)
			}
		} else {
			fmt.Fprintf(stderr, "hinit: %v\n", err)
		}
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", path)
	for _, f := range c.DropIns {
		fmt.Fprintf(stdout, "%s: ok\n", f)
	}
	return 0
}

// withContenv replaces itself with CMD run in the container environment of
// $HINIT_RUNTIME_DIR/env (as boot hooks left it), like s6-overlay's
// with-contenv.
func withContenv(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "hinit: usage: with-contenv CMD [ARGS...]")
		return 2
	}
	dir := filepath.Join(or(os.Getenv("HINIT_RUNTIME_DIR"), DefaultRuntimeDir), "env")
	env, err := contenvd.Read(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hinit: with-contenv: %v; is hinit running, and are you root or in its user's group?\n", err)
		return 1
	}
	cmd, err := launch.Program{Argv: args, Env: env}.Build()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hinit: with-contenv: %v\n", err)
		return launch.ExitCode(err)
	}
	err = syscall.Exec(cmd.Path, cmd.Argv, cmd.Attr.Env)
	fmt.Fprintf(os.Stderr, "hinit: with-contenv: exec %s: %v\n", args[0], err)
	return launch.ExitCode(err)
}

// dropTiniFlags lets hinit stand in for /usr/bin/tini, so that old
// `tini -g --` entrypoints keep working: tini's flags are accepted and
// ignored (hinit always reaps, signals main and kills process groups at
// shutdown), up to "--" or the first word that is not a flag.
func dropTiniFlags(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		flag := args[0]
		args = args[1:]
		switch flag {
		case "--":
			return args
		case "-p", "-e": // tini flags that take a value
			if len(args) > 0 {
				args = args[1:]
			}
		}
	}
	return args
}
