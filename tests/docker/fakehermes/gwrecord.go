package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// fields are the members one write of gateway_state.json sets.
type fields map[string]any

// gateway is one running gateway process: its identity, its agent and its
// child.
type gateway struct {
	profile, dir string
	pid          int
	startTime    uint64
	busy         time.Duration // FAKE_BUSY: how long the one active agent works; 0: idle
	agentDone    chan struct{}

	mu    sync.Mutex // one writer of gateway_state.json at a time within this process
	child *exec.Cmd
}

func newGateway(profile, dir string) *gateway {
	g := &gateway{profile: profile, dir: dir, pid: os.Getpid(), agentDone: make(chan struct{})}
	g.startTime, _ = startTime(g.pid)
	if data, err := os.ReadFile(filepath.Join(dir, "FAKE_BUSY")); err == nil {
		secs, _ := strconv.ParseFloat(string(trimSpace(data)), 64)
		g.busy = time.Duration(secs * float64(time.Second))
		time.AfterFunc(g.busy, func() { close(g.agentDone) })
	}
	return g
}

// agents is the number of active agents.
func (g *gateway) agents() int {
	if g.busy == 0 {
		return 0
	}
	select {
	case <-g.agentDone:
		return 0
	default:
		return 1
	}
}

// pidRecord is what gateway.pid, gateway.lock and every state write carry.
func (g *gateway) pidRecord() fields {
	return fields{"pid": g.pid, "kind": "hermes-gateway", "argv": os.Args, "start_time": g.startTime, "hermes_home": g.dir}
}

// freshRecord is the gateway's own record, used when gateway_state.json
// holds nothing readable.
func (g *gateway) freshRecord() map[string]json.RawMessage {
	rec := g.pidRecord()
	initial := fields{"gateway_state": "starting", "exit_reason": nil, "restart_requested": false,
		"active_agents": 0, "platforms": map[string]any{}, "session_store": map[string]string{"status": "unknown"}}
	for k, v := range initial {
		rec[k] = v
	}
	return encodeFields(rec)
}

// update is hermes' write_runtime_status: read the file as it is now (or
// start from the gateway's own record), re-stamp the writer's identity and
// updated_at, set f, and replace the whole file. Like hermes it holds no
// lock against other writers, so a field another process writes between
// the read and the rename is lost; FAKE_STATE_WRITE_DELAY widens that
// window, which real hermes spends in json, logging and code lookups.
func (g *gateway) update(f fields) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := filepath.Join(g.dir, stateFile)
	payload := map[string]json.RawMessage{}
	if data, err := os.ReadFile(p); err != nil || json.Unmarshal(data, &payload) != nil || len(payload) == 0 {
		payload = g.freshRecord()
	}
	id := g.pidRecord()
	delete(id, "hermes_home")
	id["updated_at"] = time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
	for k, v := range encodeFields(id) {
		payload[k] = v
	}
	for k, v := range encodeFields(f) {
		payload[k] = v
	}
	data, _ := json.Marshal(payload)
	if d, err := time.ParseDuration(os.Getenv("FAKE_STATE_WRITE_DELAY")); err == nil {
		time.Sleep(d)
	}
	if err := writeAtomic(p, data); err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %v\n", err)
	}
}

// heartbeat rewrites the state file every 30 s (FAKE_HEARTBEAT) until stop.
func (g *gateway) heartbeat(stop <-chan struct{}) {
	every := 30 * time.Second
	if d, err := time.ParseDuration(os.Getenv("FAKE_HEARTBEAT")); err == nil && d > 0 {
		every = d
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			g.update(fields{"active_agents": g.agents()})
		}
	}
}

// writePidFile creates gateway.pid with O_EXCL, as hermes does. The lock is
// held, so a file already there is a dead gateway's and is removed first.
func (g *gateway) writePidFile() error {
	p := filepath.Join(g.dir, pidFile)
	os.Remove(p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	defer f.Close()
	return json.NewEncoder(f).Encode(g.pidRecord())
}

// removePidFile removes gateway.pid when it is still this process's.
func (g *gateway) removePidFile() {
	p := filepath.Join(g.dir, pidFile)
	var rec struct{ PID int }
	if data, err := os.ReadFile(p); err == nil && json.Unmarshal(data, &rec) == nil && rec.PID == g.pid {
		os.Remove(p)
	}
}

// startChild runs the gateway's one background process (a tool's
// subprocess, in hermes) and lists it in processes.json.
func (g *gateway) startChild() {
	g.child = exec.Command("/proc/self/exe", "__tool-child")
	if err := g.child.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "gateway: child: %v\n", err)
		g.child = nil
	}
	g.writeProcesses()
}

// stopChild ends the child and empties processes.json.
func (g *gateway) stopChild() {
	if g.child != nil {
		g.child.Process.Kill()
		g.child.Wait()
		g.child = nil
	}
	g.writeProcesses()
}

// writeProcesses writes processes.json: the children running now.
func (g *gateway) writeProcesses() {
	list := []fields{}
	if g.child != nil {
		list = append(list, fields{"pid": g.child.Process.Pid, "command": "tool-child", "session_id": "fake",
			"started_at": time.Now().UTC().Format(time.RFC3339)})
	}
	data, _ := json.Marshal(list)
	writeAtomic(filepath.Join(g.dir, "processes.json"), data)
}

// runToolChild is the child: it waits to be killed.
func runToolChild() int {
	for {
		time.Sleep(time.Hour)
	}
}

func encodeFields(f fields) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(f))
	for k, v := range f {
		out[k], _ = json.Marshal(v)
	}
	return out
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
