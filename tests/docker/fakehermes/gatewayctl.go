package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// runGateway is `hermes [-p P] gateway run|start|stop|restart|status`.
func runGateway(profile string, args []string) int {
	if len(args) == 0 {
		return usage("gateway needs run, start, stop, restart or status")
	}
	verb, rest := args[0], args[1:]
	all := slices.Contains(rest, "--all")
	switch verb {
	case "run":
		return runGatewayProcess(profile, rest)
	case "status":
		return runStatus([]string{slotName(profile)})
	case "start", "stop", "restart":
		if !underHinit() {
			return notSupervised()
		}
		if all {
			return controlAll(verb)
		}
		if verb != "stop" && refuseUnderMultiplex(profile, slices.Contains(rest, "--force")) {
			return exitConfig
		}
		return controlOne(verb, profile)
	}
	return usage("unknown gateway command " + verb)
}

// slotName is the hinit service of a profile's gateway.
func slotName(profile string) string { return "gateway-" + profile }

// controlOne is `hermes [-p P] gateway start|stop|restart`:
// `hsvc start|stop|restart gateway-P --wait`. hinit records desired_state
// in the profile's gateway_state.json and, for stop and restart, writes the
// planned-stop marker before SIGTERM. A start of a profile that has no slot
// yet (created on the host, say) registers one: `hsvc register gateway P`.
func controlOne(verb, profile string) int {
	name := slotName(profile)
	r := callHsvc(verb, name, "--wait")
	if r.code == hsvcNoService && verb == "start" && exists(filepath.Join(profileDir(profile), "SOUL.md")) {
		if r = callHsvc("register", "gateway", profile); r.code == 0 {
			fmt.Printf("✓ registered the gateway slot for profile '%s'\n", profile)
		}
	}
	switch {
	case r.code == hsvcNoService:
		fmt.Fprintf(os.Stderr, "✗ no such gateway '%s': create it with `hermes profile create %s` first\n", profile, profile)
		return exitFailed
	case r.code != 0:
		fmt.Fprintf(os.Stderr, "✗ %s\n", r.stderr)
		return exitFailed
	}
	fmt.Printf("✓ %s %s\n", name, pastTense(verb))
	return exitOK
}

// controlAll is `hermes gateway stop|restart --all`: `hsvc stop|restart
// --all --wait`, every registered gateway in one request, so no gateway is
// left running for a supervisor to bring back (the pkill bug of the s6
// image, hermes PR #30136 review blocker 3).
func controlAll(verb string) int {
	if verb == "start" {
		return usage("gateway start takes no --all; start profiles one by one")
	}
	list := callHsvc("list", "--prefix", "gateway-")
	names := strings.Fields(list.stdout)
	if list.code != 0 || len(names) == 0 {
		fmt.Fprintln(os.Stderr, "✗ No profile gateways registered under hinit")
		return exitFailed
	}
	if r := callHsvc(verb, "--all", "--wait"); r.code != 0 {
		fmt.Fprintf(os.Stderr, "✗ Could not %s the gateways: %s\n", verb, r.stderr)
		return exitFailed
	}
	fmt.Printf("✓ %s %d profile gateway(s) under hinit\n", capitalized(pastTense(verb)), len(names))
	return exitOK
}

// runStatus is `hermes status` and `hermes gateway status`: hsvc status.
func runStatus(names []string) int {
	if !underHinit() {
		return notSupervised()
	}
	fmt.Println("Manager:      hinit (container supervisor)")
	r := callHsvc(append([]string{"status"}, names...)...)
	fmt.Print(r.stdout)
	if r.code != 0 {
		fmt.Fprintf(os.Stderr, "✗ %s\n", r.stderr)
		return exitFailed
	}
	return exitOK
}

func pastTense(verb string) string {
	if verb == "stop" {
		return "stopped"
	}
	return verb + "ed"
}

func capitalized(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
