package pid1

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hinit/contenvd"
	"hinit/control"
	"hinit/launch"

	"hinit/config"
)

// Version is hinit's version, set at build time with -ldflags "-X".
var Version = "dev"

const usage = `usage: hinit [OPTIONS] [--] [CMD [ARGS...]]
       hinit check-config [FILE]
       hinit with-contenv CMD [ARGS...]   (also as with-contenv)
       hinit chown-tree [-xdev] [-top] [-from-uid N | -from-root] UID[:GID] PATH   (the image's setup)
       hinit --version | --help

As PID 1 every argument is the CMD's (options only when a "--" ends
them); the verbs are for docker exec.

hinit is the PID 1 and process supervisor of the Hermes Agent image. It runs
CMD as the container's main program (routed by main: in hinit.yaml), supervises
the services of hinit.yaml and of the scandir, reaps zombies, and exits with
main's exit status. Without a hinit.yaml it does what tini does, silently.

Options (tini's, also when hinit runs as tini; docs/tini.md):
  -e CODE   main's exit CODE (0-255) becomes 0; repeatable
  -g        signals go to main's process group
  -p SIG    hinit's parent-death signal (e.g. SIGTERM): forwarded, then shutdown
  -s        child subreaper (hinit is one anyway when not PID 1)
  -v        more verbose; repeatable
  -w        a warning for every orphan reaped
  -l        license

Environment: HINIT_CONFIG (default /etc/hinit/hinit.yaml), HINIT_RUNTIME_DIR
(/run/hinit), HINIT_SCANDIR (/run/service), HINIT_SHUTDOWN_TIMEOUT (8s),
HINIT_LOG_LEVEL (info; warn without hinit.yaml), HINIT_GATEWAY_CHECK_GRACE
(reconcile.check_grace), TINI_SUBREAPER,
TINI_KILL_PROCESS_GROUP, TINI_VERBOSITY, POSIXLY_CORRECT.
`

// tiniUsage is -h as tini: tini's own text, with hinit named.
const tiniUsage = `tini (tini version 0.19.0 - hinit %s)
Usage: tini [OPTIONS] PROGRAM -- [ARGS] | --version

Execute a program under the supervision of a valid init process (hinit, as tini)

Command line options:

  --version: Show version and exit.
  -h: Show this help message and exit.
  -s: Register as a process subreaper (requires Linux >= 3.4).
  -p SIGNAL: Trigger SIGNAL when parent dies, e.g. "-p SIGKILL".
  -v: Generate more verbose output. Repeat up to 3 times.
  -w: Print a warning when processes are getting reaped.
  -g: Send signals to the child's process group.
  -e EXIT_CODE: Remap EXIT_CODE (from 0 to 255) to 0 (can be repeated).
  -l: Show license and exit.

Environment variables:

  TINI_SUBREAPER: Register as a process subreaper (requires Linux >= 3.4).
  TINI_VERBOSITY: Set the verbosity level (default: 1).
  TINI_KILL_PROCESS_GROUP: Send signals to the child's process group.

`

// license is what -l prints.
const license = "hinit: see the LICENSE file of hinit's source repository (tini's own is MIT, Thomas Orozco).\n"

// Main runs hinit with argv (os.Args: the container's CMD follows argv[0])
// and returns the process exit status. Called as with-contenv, it runs a
// command with the container environment instead; called as tini, it reads
// its command line as tini does.
func Main(argv []string) int {
	args := argv[1:]
	switch filepath.Base(argv[0]) {
	case "with-contenv":
		return withContenv(args)
	case "tini":
		return run("tini", args, true)
	}
	if os.Getpid() == 1 {
		// As the container's PID 1 every word is the CMD's, so that
		// `docker run IMAGE --version` reaches hermes: hinit's own verbs
		// are for docker exec, and its options need a "--" after them
		// (ENTRYPOINT ["hinit", "-g", "--"]).
		if i := slices.Index(args, "--"); i >= 0 {
			if o, cmd, act, err := parseFlags(args[:i+1], false, os.LookupEnv); err == nil && act == actRun && len(cmd) == 0 {
				o.readEnv(os.LookupEnv)
				return boot(args[i+1:], o)
			}
		}
		o := &options{}
		o.readEnv(os.LookupEnv)
		return boot(args, o)
	}
	if len(args) > 0 {
		switch args[0] {
		case "-V":
			return run("hinit", []string{"--version"}, false)
		case "check-config":
			return checkConfig(args[1:], os.Stdout, os.Stderr)
		case "with-contenv":
			return withContenv(args[1:])
		case "chown-tree":
			return chownTree(args[1:], os.Stdout, os.Stderr)
		}
	}
	return run("hinit", args, false)
}

// run parses a command line that is not PID 1's (or is tini's): a bad one
// ends here with one line, before anything is touched (no subreaper, no
// runtime dir), with 2 (1 as tini, as tini does).
func run(name string, args []string, asTini bool) int {
	o, cmd, act, err := parseFlags(args, asTini, os.LookupEnv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s; %s -h lists the options\n", name, strings.TrimPrefix(err.Error(), "usage: "), name)
		if asTini {
			return 1
		}
		return 2
	}
	switch act {
	case actHelp:
		if asTini {
			fmt.Printf(tiniUsage, Version)
		} else {
			fmt.Print(usage)
		}
		return 0
	case actVersion:
		if asTini {
			fmt.Printf("tini version 0.19.0 - hinit %s\n", Version)
		} else {
			fmt.Println("hinit", Version)
		}
		return 0
	case actLicense:
		fmt.Print(license)
		return 0
	}
	// No program: tini's usage error in the bare mode; with a hinit.yaml,
	// main.default runs, as with no CMD (an entrypoint pinned to
	// ["/usr/bin/tini","-g","--"] in front of the image).
	if asTini && len(cmd) == 0 && control.Bare(os.Getenv) {
		fmt.Fprintln(os.Stderr, "tini: no program given; usage: tini [OPTIONS] PROGRAM -- [ARGS]")
		return 1
	}
	o.readEnv(os.LookupEnv)
	return boot(cmd, o)
}

// checkConfig validates a configuration file: exit 0 when it is good, 1
// with one "file:line: problem" line each when it is not. No FILE and no
// hinit.yaml at the default path is good: boot runs without one.
func checkConfig(args []string, stdout, stderr io.Writer) int {
	path := or(os.Getenv(control.ConfigEnv), DefaultConfig)
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(stdout, "usage: hinit check-config [FILE]: check FILE (default $HINIT_CONFIG or "+DefaultConfig+") and its hinit.d drop-ins")
		return 0
	}
	if len(args) > 1 || len(args) == 1 && strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "hinit: usage: hinit check-config [FILE]")
		return 2
	}
	if len(args) == 1 {
		path = args[0]
	}
	c, err := config.Load(path)
	if errors.Is(err, fs.ErrNotExist) && len(args) == 0 && os.Getenv(control.ConfigEnv) == "" {
		// What boot does then (loadSettings) is no error: say what it is.
		mode := "on the built-in defaults (HINIT_RUNTIME_DIR or HINIT_SCANDIR is set)"
		if control.Bare(os.Getenv) {
			mode = "bare, as tini does (docs/tini.md)"
		}
		fmt.Fprintf(stdout, "%s: none; hinit runs %s\n", path, mode)
		return 0
	}
	if err != nil {
		if ce, ok := err.(*config.Error); ok {
			for _, l := range ce.All() { // a person fixing the file: every problem
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
// with-contenv. Without that dir (hinit could not write it, or is not
// running) CMD keeps the environment with-contenv was started with, which
// is then the whole container environment there is: what hinit gives its
// services without the dir, or docker's for a docker exec. A dir that
// exists but cannot be read is an error: it may hold what CMD needs.
func withContenv(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "hinit: usage: with-contenv CMD [ARGS...]")
		return 2
	}
	dir := contenvd.Dir(control.RuntimeDir(os.Getenv))
	env, err := contenvd.Read(dir)
	if errors.Is(err, fs.ErrNotExist) {
		env, err = launch.ProcessEnv(), nil
	}
	if err != nil {
		hint := "are you root or in its user's group?"
		if missing, _ := missingCaps(); os.Geteuid() == 0 && slices.Contains(missing, "DAC_OVERRIDE") {
			hint = "root without CAP_DAC_OVERRIDE (--cap-drop ALL) must run as its owner or in its group (docker exec -u)"
		}
		fmt.Fprintf(os.Stderr, "hinit: with-contenv: %v; %s\n", err, hint)
		return 1
	}
	// Root's with-contenv (a root service's #!/command/with-contenv bash)
	// gets root's PATH, as hinit gives what it runs as root.
	cmd, err := launch.Program{Argv: args, Env: env, RootsPATH: os.Geteuid() == 0}.Build()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hinit: with-contenv: %v\n", err)
		return launch.ExitCode(err)
	}
	err = cmd.Exec()
	fmt.Fprintf(os.Stderr, "hinit: with-contenv: exec %s: %v\n", args[0], err)
	return launch.ExitCode(err)
}
