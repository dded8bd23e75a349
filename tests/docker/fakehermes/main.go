// Command fakehermes is the `hermes` CLI of the offline test image: a small
// static program that behaves, towards hinit, exactly as SPEC §1 says the
// real Hermes Agent does. It is the integration contract for real hermes:
// every place where it calls hsvc is a place where hermes' container
// service manager must make the same call (docs/hermes-adapter.md lists
// them).
//
//	hermes                              idle main: a banner, then waits for a signal
//	hermes chat -q TEXT                 one answer, exit 0
//	hermes --tui                        full-screen: shows the terminal size, redraws on SIGWINCH
//	hermes dashboard --host H --port P  serves HTTP; exit 78 on a non-loopback bind without auth
//	hermes [-p P] gateway run --replace the gateway: lock, pid file, gateway_state.json, markers, drain, 1/75/78
//	hermes [-p P] gateway start|stop|restart [--all], gateway status, status
//	hermes profile create|delete|list
//
// Test hooks (fake only). Files in a profile dir: FAKE_BROKEN makes the
// gateway exit 78 (EX_CONFIG) at startup, FAKE_CRASH makes it exit 1,
// FAKE_BUSY (seconds) gives it one active agent working that long.
// Environment: FAKE_HEARTBEAT (a Go duration) replaces the 30 s state
// heartbeat, FAKE_STATE_WRITE_DELAY widens the read-modify-write window of
// each state write.
package main

import (
	"fmt"
	"os"
	"strings"
)

// Exit codes of hermes that hinit's configuration relies on.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitRestart = 75 // EX_TEMPFAIL: the gateway asks its supervisor for a new process at once
	exitConfig  = 78 // EX_CONFIG: fatal configuration error, never restarted
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run parses hermes' global options and dispatches to a subcommand.
func run(args []string) int {
	profile := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch a := args[0]; {
		case a == "-p" || a == "--profile":
			if len(args) < 2 {
				return usage("-p needs a profile name")
			}
			profile, args = args[1], args[2:]
			continue
		case strings.HasPrefix(a, "--profile="):
			profile = strings.TrimPrefix(a, "--profile=")
		case a == "--tui" || a == "-T":
			return runTUI()
		case a == "-h" || a == "--help":
			fmt.Println(helpText)
			return exitOK
		case a == "--version":
			fmt.Println("hermes 0.0.0-fake (hinit test image)")
			return exitOK
		default:
			return usage("unknown option " + a)
		}
		args = args[1:]
	}
	if profile == "" {
		profile = "default"
	}
	if profile != "default" && !profileRE.MatchString(profile) {
		return usage(fmt.Sprintf("invalid profile name %q (a-z, 0-9, _ and -, at most 64 bytes)", profile))
	}
	return dispatch(profile, args)
}

// dispatch runs one subcommand for profile.
func dispatch(profile string, args []string) int {
	if len(args) == 0 {
		return runIdle()
	}
	switch args[0] {
	case "__tool-child":
		return runToolChild()
	case "chat":
		return runChat(args[1:])
	case "dashboard":
		return runDashboard(args[1:])
	case "gateway":
		return runGateway(profile, args[1:])
	case "profile":
		return runProfile(args[1:])
	case "status":
		return runStatus(nil)
	case "login", "mcp", "setup", "doctor", "config", "model":
		// Subcommands only named here; some share a name with a program
		// on PATH (login, mcp), which is why hinit.yaml always wraps them.
		fmt.Printf("usage: hermes %s (fake: nothing to do)\n", args[0])
		return exitOK
	}
	return usage("unknown command " + args[0])
}

// usage reports a command line hermes cannot run.
func usage(why string) int {
	fmt.Fprintf(os.Stderr, "hermes: %s; try hermes --help\n", why)
	return exitUsage
}

const helpText = `usage: hermes [-p PROFILE] [--tui] [COMMAND]

  (no command)                 start the agent (fake: banner, then idle)
  chat -q TEXT                 answer once
  dashboard [--host H] [--port P] [--no-open]
  gateway run [--replace] [--no-supervise]
  gateway start|stop|restart [--all]
  gateway status
  profile create|delete NAME, profile list
  status`
