package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// Files of a profile dir that hinit and hermes share (SPEC §1), and the
// gateway's own.
const (
	stateFile    = "gateway_state.json"
	markerFile   = ".gateway-planned-stop.json"
	takeoverFile = ".gateway-takeover.json"
	pidFile      = "gateway.pid"
	lockFile     = "gateway.lock"
)

// markerTTL is how long a planned-stop or takeover marker is live.
const markerTTL = 60 * time.Second

// profileRE is hermes' validate_profile_name: at most 64 bytes.
var profileRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// hermesHome is $HERMES_HOME, /opt/data when unset.
func hermesHome() string {
	if h := os.Getenv("HERMES_HOME"); h != "" {
		return h
	}
	return "/opt/data"
}

// profileDir is where a profile lives: the root profile "default" is
// $HERMES_HOME itself, any other is $HERMES_HOME/profiles/<name>.
func profileDir(profile string) string {
	if profile == "default" {
		return hermesHome()
	}
	return filepath.Join(hermesHome(), "profiles", profile)
}

// writeAtomic replaces path with data through a temporary file.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return nil
}

// marker is a planned-stop or takeover marker.
type marker struct {
	TargetPID       int     `json:"target_pid"`
	TargetStartTime *uint64 `json:"target_start_time"`
	WrittenAt       string  `json:"written_at"`
}

// liveMarker reads the marker name in dir. A malformed or stale one (older
// than markerTTL) can never match anyone: it is removed and nil returned.
func liveMarker(dir, name string) *marker {
	p := filepath.Join(dir, name)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var m marker
	if json.Unmarshal(data, &m) != nil || m.TargetPID <= 0 {
		os.Remove(p)
		return nil
	}
	if at, err := time.Parse(time.RFC3339Nano, m.WrittenAt); err != nil || time.Since(at) > markerTTL {
		os.Remove(p)
		return nil
	}
	return &m
}

// namesSelf reports whether m is meant for this very process: its pid and,
// when both are known, its start time.
func (m *marker) namesSelf() bool {
	if m.TargetPID != os.Getpid() {
		return false
	}
	own, err := startTime(os.Getpid())
	return m.TargetStartTime == nil || err != nil || *m.TargetStartTime == own
}

// consumeMarker reports whether dir holds a live marker name meant for this
// process; a live marker is removed either way, as hermes does.
func consumeMarker(dir, name string) bool {
	m := liveMarker(dir, name)
	if m == nil {
		return false
	}
	os.Remove(filepath.Join(dir, name))
	return m.namesSelf()
}

// watchPlannedStop is hermes' planned-stop watcher: every 0.5 s, a live
// marker naming this process sends on planned (the shutdown then consumes
// it); stale and malformed ones are removed, others' left alone.
func watchPlannedStop(dir string, stop <-chan struct{}, planned chan<- struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if m := liveMarker(dir, markerFile); m != nil && m.namesSelf() {
				select {
				case planned <- struct{}{}:
				default:
				}
			}
		}
	}
}

// startTime is field 22 of /proc/<pid>/stat: the start time in clock ticks.
func startTime(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("bad stat")
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 {
		return 0, errors.New("bad stat")
	}
	return strconv.ParseUint(string(f[19]), 10, 64)
}

// utcNow is a timestamp as hermes writes them.
func utcNow() string {
	return time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
