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

// Files of a profile dir that hinit and hermes share (SPEC §1).
const (
	stateFile  = "gateway_state.json"
	markerFile = ".gateway-planned-stop.json"
	pidFile    = "gateway.pid"
)

// profileRE is hermes' validate_profile_name.
var profileRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

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

// updateState rewrites gateway_state.json in dir with fields set, keeping
// every other field exactly as it was (they belong to other writers:
// desired_state is hinit's). The write is atomic: a temporary file renamed
// over the old one.
func updateState(dir string, fields map[string]any) error {
	p := filepath.Join(dir, stateFile)
	obj := map[string]json.RawMessage{}
	if data, err := os.ReadFile(p); err == nil {
		json.Unmarshal(data, &obj) // a corrupt file is replaced
	}
	for k, v := range fields {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("update %s: %w", p, err)
		}
		obj[k] = raw
	}
	obj["updated_at"], _ = json.Marshal(time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"))
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("update %s: %w", p, err)
	}
	return writeAtomic(p, data)
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

// marker is the planned-stop marker a stopper writes before SIGTERM.
type marker struct {
	TargetPID       int    `json:"target_pid"`
	TargetStartTime uint64 `json:"target_start_time"`
	StopperPID      int    `json:"stopper_pid"`
	WrittenAt       string `json:"written_at"`
}

// consumeMarker reports whether dir holds a planned-stop marker meant for
// this very process (pid and start time both match) and removes it if so.
// A marker for another process is left alone.
func consumeMarker(dir string) bool {
	p := filepath.Join(dir, markerFile)
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	var m marker
	if json.Unmarshal(data, &m) != nil || m.TargetPID != os.Getpid() {
		return false
	}
	if start, err := startTime(os.Getpid()); err != nil || start != m.TargetStartTime {
		return false
	}
	os.Remove(p)
	return true
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

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
