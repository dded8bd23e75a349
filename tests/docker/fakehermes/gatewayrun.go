package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// runGatewayProcess is `hermes [-p P] gateway run [--replace]`.
//
// Run by hinit (HERMES_SUPERVISED_CHILD=1, set by the gateway template) it
// is the gateway itself: gateway_state.json goes starting → running; on
// SIGTERM with a planned-stop marker meant for it, it persists "stopped"
// and exits 0; on any other SIGTERM (the container going down) it persists
// "running" and exits 143, so the next boot brings it back. A profile
// marked broken exits 78 at startup.
//
// Run by a user, it hands the gateway to hinit instead (`hsvc start
// gateway-P`) and stays as a heartbeat, as hermes does under s6.
func runGatewayProcess(profile string, args []string) int {
	noSupervise := slices.Contains(args, "--no-supervise") ||
		slices.Contains([]string{"1", "true", "yes"}, strings.ToLower(os.Getenv("HERMES_GATEWAY_NO_SUPERVISE")))
	if os.Getenv("HERMES_SUPERVISED_CHILD") == "" && !noSupervise && underHinit() {
		return redirectToSupervisor(profile)
	}
	dir := profileDir(profile)
	if !exists(dir) {
		fmt.Fprintf(os.Stderr, "gateway: no profile %s at %s\n", profile, dir)
		return exitConfig
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if code, done := startGateway(profile, dir); done {
		return code
	}
	<-sigs
	return stopGateway(dir)
}

// startGateway records the start and applies the FAKE_* test hooks; done
// means the gateway ends at once with code.
func startGateway(profile, dir string) (code int, done bool) {
	pid := os.Getpid()
	start, _ := startTime(pid)
	rec := map[string]any{"pid": pid, "kind": "hermes-gateway", "argv": os.Args, "start_time": start, "hermes_home": dir}
	pidRec, _ := json.Marshal(rec)
	os.WriteFile(filepath.Join(dir, pidFile), pidRec, 0o644)
	rec["gateway_state"] = "starting"
	if err := updateState(dir, rec); err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %v\n", err)
	}
	fmt.Printf("⚕ Hermes Gateway Starting (profile %s, pid %d, uid %d)\n", profile, pid, os.Getuid())
	switch {
	case exists(filepath.Join(dir, "FAKE_BROKEN")):
		failStartup(dir, "fatal configuration error (FAKE_BROKEN)")
		return exitConfig, true
	case exists(filepath.Join(dir, "FAKE_CRASH")):
		failStartup(dir, "crashed at startup (FAKE_CRASH)")
		return exitFailed, true
	}
	updateState(dir, map[string]any{"gateway_state": "running"})
	fmt.Printf("✓ gateway %s running\n", profile)
	return 0, false
}

// failStartup records a failed startup.
func failStartup(dir, why string) {
	updateState(dir, map[string]any{"gateway_state": "startup_failed", "exit_reason": why})
	os.Remove(filepath.Join(dir, pidFile))
	fmt.Fprintf(os.Stderr, "✗ gateway: %s\n", why)
}

// stopGateway handles SIGTERM: a planned stop persists "stopped" and exits
// 0; anything else persists "running" and exits 128+SIGTERM.
func stopGateway(dir string) int {
	defer os.Remove(filepath.Join(dir, pidFile))
	if consumeMarker(dir) {
		updateState(dir, map[string]any{"gateway_state": "stopped", "exit_reason": "planned stop"})
		fmt.Println("gateway: planned stop: persisted stopped, exit 0")
		return exitOK
	}
	updateState(dir, map[string]any{"gateway_state": "running", "exit_reason": "signal"})
	fmt.Println("gateway: SIGTERM without planned-stop marker: persisted running, exit 143")
	return 128 + int(unix.SIGTERM)
}

// redirectToSupervisor is `hermes gateway run` typed by a user in the
// container: the gateway belongs to hinit, so ask hinit to start it and
// stay as a heartbeat until a signal.
func redirectToSupervisor(profile string) int {
	if r := controlOne("start", profile); r != exitOK {
		return r
	}
	fmt.Fprintln(os.Stderr, "→ gateway is now running under hinit supervision (auto-restart on crash). "+
		"Use --no-supervise (or HERMES_GATEWAY_NO_SUPERVISE=1) to opt out.")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	s := <-sigs
	return 128 + int(s.(syscall.Signal))
}
