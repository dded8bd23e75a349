package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// runGatewayProcess is `hermes [-p P] gateway run [--replace] [--force]`.
//
// Run by hinit (HERMES_S6_SUPERVISED_CHILD=1 under compat: s6-overlay, else
// HERMES_SUPERVISED_CHILD=1, both set by the gateway template) it
// is the gateway itself, with the lifecycle of hermes' gateway/run.py and
// gateway/status.py:
//
//   - a named profile under multiplexing (GATEWAY_MULTIPLEX_PROFILES or
//     multiplex_profiles in the root config.yaml) refuses to start without
//     --force: exit 78, the default gateway serves it;
//   - gateway.lock is flock()ed (with --replace a live holder is asked to
//     go with a takeover marker and SIGTERM), then gateway.pid is created
//     O_EXCL;
//   - gateway_state.json is rewritten whole, read-modify-write, on every
//     state change and every 30 s (FAKE_HEARTBEAT), from whatever the file
//     holds (or the gateway's own fresh record when it holds nothing);
//   - processes.json lists the child the gateway really runs;
//   - a planned-stop marker watcher looks every 0.5 s for a live marker
//     naming this process; markers older than 60 s are stale and removed;
//   - SIGTERM drains active agents for up to restart_drain_timeout, then:
//     with a planned-stop (or takeover) marker meant for it, persists
//     "stopped" and exits 0; without, persists "running" and exits 1, so
//     a supervisor restarts it and the next boot brings it back;
//   - SIGUSR1 is a graceful restart: drain, persist, exit 75 ("restart
//     me").
//
// Run by a user, it hands the gateway to hinit instead (`hsvc start
// gateway-P`) and stays as a heartbeat, as hermes does under s6.
func runGatewayProcess(profile string, args []string) int {
	noSupervise := slices.Contains(args, "--no-supervise") ||
		slices.Contains([]string{"1", "true", "yes"}, strings.ToLower(os.Getenv("HERMES_GATEWAY_NO_SUPERVISE")))
	if os.Getenv(supervisedMarker()) == "" && !noSupervise && underHinit() {
		return redirectToSupervisor(profile)
	}
	dir := profileDir(profile)
	if !exists(dir) {
		fmt.Fprintf(os.Stderr, "gateway: no profile %s at %s\n", profile, dir)
		return exitConfig
	}
	if refuseUnderMultiplex(profile, slices.Contains(args, "--force")) {
		return exitConfig
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	g := newGateway(profile, dir)
	lock, err := acquireLock(dir, slices.Contains(args, "--replace"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "✗ gateway: %v\n", err)
		return exitFailed
	}
	defer lock.Close()
	defer g.removePidFile()
	if err := g.writePidFile(); err != nil {
		fmt.Fprintf(os.Stderr, "✗ gateway: %v\n", err)
		return exitFailed
	}
	if code, done := g.start(); done {
		return code
	}
	stop := make(chan struct{})
	defer close(stop)
	planned := make(chan struct{}, 1)
	go g.heartbeat(stop)
	go watchPlannedStop(dir, stop, planned)
	select {
	case s := <-sigs:
		if s == syscall.SIGUSR1 {
			return g.restart()
		}
	case <-planned:
		fmt.Println("gateway: planned-stop marker seen by the watcher")
	}
	return g.stop()
}

// refuseUnderMultiplex is hermes' guard for a named profile whose
// messages the default gateway already serves: not one that says
// gateway.standalone.
func refuseUnderMultiplex(profile string, force bool) bool {
	if profile == "default" || force || !multiplexOn() || standalone(profile) {
		return false
	}
	fmt.Fprintf(os.Stderr, "✗ profile '%s' is served by the default gateway (multiplex_profiles is on): "+
		"not starting a second gateway for it; pass --force to start one anyway\n", profile)
	return true
}

// start records the start, runs the gateway's child and applies the
// FAKE_* test hooks; done means the gateway ends at once with code.
func (g *gateway) start() (code int, done bool) {
	g.update(fields{"gateway_state": "starting", "exit_reason": nil, "restart_requested": false,
		"active_agents": g.agents(), "platforms": map[string]any{}})
	fmt.Printf("⚕ Hermes Gateway Starting (profile %s, pid %d, uid %d)\n", g.profile, g.pid, os.Getuid())
	switch {
	case exists(filepath.Join(g.dir, "FAKE_BROKEN")):
		g.failStartup("fatal configuration error (FAKE_BROKEN)")
		return exitConfig, true
	case exists(filepath.Join(g.dir, "FAKE_CRASH")):
		g.failStartup("crashed at startup (FAKE_CRASH)")
		return exitFailed, true
	}
	g.startChild()
	g.update(fields{"gateway_state": "running", "platforms": map[string]any{"fake": map[string]any{"state": "connected"}}})
	fmt.Printf("✓ gateway %s running\n", g.profile)
	return 0, false
}

// failStartup records a failed startup.
func (g *gateway) failStartup(why string) {
	g.update(fields{"gateway_state": "startup_failed", "exit_reason": why})
	fmt.Fprintf(os.Stderr, "✗ gateway: %s\n", why)
}

// stop handles SIGTERM (or the watcher's marker): drain, then a planned
// stop persists "stopped" and exits 0; anything else persists "running"
// and exits 1.
func (g *gateway) stop() int {
	planned := consumeMarker(g.dir, markerFile) || consumeMarker(g.dir, takeoverFile)
	g.drain()
	g.stopChild()
	if planned {
		g.update(fields{"gateway_state": "stopped", "exit_reason": "planned stop", "active_agents": 0})
		fmt.Println("gateway: planned stop: persisted stopped, exit 0")
		return exitOK
	}
	g.update(fields{"gateway_state": "running", "exit_reason": "signal", "active_agents": 0})
	fmt.Println("gateway: SIGTERM without planned-stop marker: persisted running, exit 1")
	return exitFailed
}

// restart is SIGUSR1: a graceful restart that asks the supervisor for a
// new process with exit 75.
func (g *gateway) restart() int {
	g.update(fields{"restart_requested": true})
	g.drain()
	g.stopChild()
	g.update(fields{"gateway_state": "running", "exit_reason": "restart requested", "active_agents": 0})
	fmt.Println("gateway: graceful restart (SIGUSR1): exit 75")
	return exitRestart
}

// drain waits for the active agents (FAKE_BUSY) to finish, at most the
// profile's restart_drain_timeout, the way hermes drains on shutdown.
func (g *gateway) drain() {
	if g.agents() == 0 {
		return
	}
	budget := drainTimeout(g.dir)
	g.update(fields{"gateway_state": "draining"})
	fmt.Printf("gateway: draining %d active agent(s) for up to %v\n", g.agents(), budget)
	start := time.Now()
	select {
	case <-g.agentDone:
		fmt.Printf("gateway: drained after %v\n", time.Since(start).Round(100*time.Millisecond))
	case <-time.After(budget):
		fmt.Printf("gateway: drain budget %v spent: interrupting the agents\n", budget)
	}
	g.update(fields{"exit_reason": "drained"})
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

// supervisedMarker is the variable by which the gateway knows it is the
// supervised child. Under s6-overlay, or hinit standing in for it
// (/run/s6/basedir: compat: s6-overlay), today's hermes reads
// HERMES_S6_SUPERVISED_CHILD only (hermes_cli/gateway.py,
// _maybe_redirect_run_to_s6_supervision); the fake does the same, so that
// a template without it makes every gateway a heartbeat here too.
func supervisedMarker() string {
	if fi, err := os.Stat("/run/s6/basedir"); err == nil && fi.IsDir() {
		return "HERMES_S6_SUPERVISED_CHILD"
	}
	return "HERMES_SUPERVISED_CHILD"
}
