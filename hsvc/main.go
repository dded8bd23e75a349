// Package hsvc is the control CLI of hinit: each verb of SPEC §4 sends one
// request over the control socket and prints the answer. It speaks only
// the control protocol and never links the supervisor, so it stays small
// and works against any hinit of the same protocol version.
package hsvc

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"hinit/control"
)

// Version is hsvc's version, set at build time with
// -ldflags "-X hinit/hsvc.Version=...".
var Version = "dev"

// Main runs hsvc with args (without the program name) and returns its exit
// code; cmd/hsvc passes it to os.Exit. SIGINT and SIGTERM end a wait or a
// follow cleanly.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &cli{
		ctx:    ctx,
		stdout: stdout,
		stderr: stderr,
		sock:   control.SocketPath(os.Getenv),
		now:    time.Now,
		bare:   func() bool { return control.Bare(os.Getenv) && control.HinitRunning() },
		interruptible: sync.OnceFunc(func() {
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			go func() { <-sigs; cancel() }()
		}),
	}
	return c.run(args)
}

// cli is one run of hsvc with everything it touches outside itself, so
// that tests run it against a fake hinit with a fixed clock.
type cli struct {
	ctx context.Context
	// interruptible makes SIGINT and SIGTERM end ctx; the verbs that wait
	// or follow call it. A request hinit answers at once does without:
	// SIGINT's default ends hsvc and hinit sees the hang-up, and os/signal
	// would cost every status a thread and 0.3 ms. nil in tests.
	interruptible  func()
	stdout, stderr io.Writer
	sock           string           // control socket path
	now            func() time.Time // clock for uptimes
	usage          string           // usage line of the verb being run
	about          string           // what the verb being run does
	flags          *flag.FlagSet    // the verb's flags, kept by parse for its help
	// bare reports, when no socket answers, that hinit runs in its bare
	// mode (no hinit.yaml, no socket); nil in tests.
	bare func() bool
	// seenArchive is, for hsvc logs -f, the newest archive of the log
	// already accounted for: a rotation prints those made after it.
	seenArchive string
}

// verb is one hsvc command.
type verb struct {
	usage string // synopsis, without "hsvc "
	about string // what it does, one line
	run   func(c *cli, args []string) error
}

// verbs in the order --help lists them.
var verbs = []struct {
	name string
	verb
}{
	{"status", verb{"status [NAME...] [--json]", "show services: state, pid, uptime, restarts, last exit", runStatus}},
	{"start", verb{"start NAME... | --all [--wait[=DUR]]", "want services up (--all: every gateway, nothing else)", runWant(control.VerbStart)}},
	{"stop", verb{"stop NAME... | --all [--wait[=DUR]]", "want services down (--all: every gateway, nothing else)", runWant(control.VerbStop)}},
	{"restart", verb{"restart NAME... | --all [--wait[=DUR]]", "stop, then start (--all: every gateway, nothing else)", runWant(control.VerbRestart)}},
	{"signal", verb{"signal [--process] SIG NAME", "send a signal (TERM, HUP, USR1, 9...) to a service's process group, or its process", runSignal}},
	{"register", verb{"register TEMPLATE INSTANCE [--down] [--env K=V]...", "add the service TEMPLATE-INSTANCE", runRegister}},
	{"unregister", verb{"unregister NAME [--wait[=DUR]]", "stop a service and remove it", runUnregister}},
	{"list", verb{"list [--prefix P]", "service names, one per line", runList}},
	{"wait", verb{"wait NAME --up|--ready|--down [--timeout DUR]", "block until a service reaches a state (--up or --ready: fails at once on one down by choice, exited or failed)", runWait}},
	{"logs", verb{"logs NAME [-n N] [-f] [--raw]", "print the last N lines (20) of a service's log; -f follows", runLogs}},
	{"check", verb{"check", "exit 0 when hinit answers and is healthy: no essential service failed, no shutdown under way, the scandir read, no gateway failing past check_grace", runCheck}},
	{"shutdown", verb{"shutdown [--exit-code N]", "stop the container (root only)", runShutdown}},
}

// run dispatches args to a verb and turns its error into an exit code and
// one line on stderr.
func (c *cli) run(args []string) int {
	if len(args) == 0 {
		return c.fail(usageError("no verb given; try hsvc --help"))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		c.help()
		return control.CodeOK
	case "-version", "--version", "version":
		fmt.Fprintf(c.stdout, "hsvc %s (control protocol %d)\n", Version, control.Version)
		return control.CodeOK
	}
	for _, v := range verbs {
		if v.name == args[0] {
			c.usage, c.about = "hsvc "+v.usage, v.about
			return c.fail(v.run(c, args[1:]))
		}
	}
	return c.fail(usageError("unknown verb %q%s; try hsvc --help", args[0], c.didYouMean(args[0], verbNames(), "")))
}

// verbNames lists the verbs in table order.
func verbNames() []string {
	out := make([]string, len(verbs))
	for i, v := range verbs {
		out[i] = v.name
	}
	return out
}

// fail prints err as hsvc's one error line and returns the exit code.
func (c *cli) fail(err error) int {
	if err == nil {
		return control.CodeOK
	}
	if errors.Is(err, errHelp) {
		c.verbHelp()
		return control.CodeOK
	}
	code := control.CodeFailed
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	msg := printable(strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " "))
	fmt.Fprintf(c.stderr, "hsvc: %s\n", msg)
	return code
}

// verbHelp prints the synopsis of the verb being run, what it does, and
// each of its flags with its description.
func (c *cli) verbHelp() {
	fmt.Fprintf(c.stdout, "usage: %s\n\n%s\n", c.usage, c.about)
	if c.flags == nil {
		return
	}
	var rows [][]string
	c.flags.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		name := spell(f.Name)
		switch {
		case isBool(f):
		case isOptional(f):
			name += "[=" + arg + "]"
		default:
			name += " " + arg
		}
		rows = append(rows, []string{"  " + name, usage})
	})
	if len(rows) > 0 {
		fmt.Fprintf(c.stdout, "\noptions:\n")
		c.stdout.Write(columns(rows))
	}
}

// help prints the synopsis of every verb.
func (c *cli) help() {
	w := c.stdout
	fmt.Fprintf(w, "hsvc %s: control the services of hinit, the container's PID 1\n\nusage:\n", Version)
	var rows [][]string
	for _, v := range verbs {
		rows = append(rows, []string{"  hsvc " + v.usage, v.about})
	}
	w.Write(columns(rows))
	fmt.Fprintf(w, "\n--all means every gateway (the instances of the gateway template), never other services.\n")
	fmt.Fprintf(w, "--wait without a duration waits up to %v; wait without --timeout waits for ever.\n", defaultWait)
	fmt.Fprintf(w, "hsvc VERB -h shows a verb's options; hsvc --version, hsvc's version and its control protocol's.\n")
	fmt.Fprintf(w, "The socket is $%s/%s (%s).\n", control.RuntimeDirEnv, control.SocketName, c.sock)
	fmt.Fprintf(w, "Exit codes: 0 ok, 1 failed, 2 usage, 3 no such service, 4 permission denied, 5 hinit not reachable, 6 timed out.\n")
}
