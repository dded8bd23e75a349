package pid1

import (
	"fmt"
	"io"
	"os"

	"hinit/config"
)

// Version is hinit's version, set at build time with -ldflags "-X".
var Version = "dev"

const usage = `usage: hinit [--] [CMD [ARGS...]]
       hinit check-config [FILE]
       hinit --version | --help

hinit is the PID 1 and process supervisor of the Hermes Agent image. It runs
CMD as the container's main program (routed by main: in hinit.yaml), supervises
the services of hinit.yaml and of the scandir, reaps zombies, and exits with
main's exit status.

Environment: HINIT_CONFIG (default /etc/hinit/hinit.yaml), HINIT_RUNTIME_DIR
(/run/hinit), HINIT_SCANDIR (/run/service), HINIT_SHUTDOWN_TIMEOUT (8s),
HINIT_LOG_LEVEL (info).
`

// Main runs hinit with the container's CMD as args (os.Args[1:]) and
// returns the process exit status.
func Main(args []string) int {
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
	if _, err := config.Load(path); err != nil {
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
	return 0
}
