package gwstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"hinit/asuser"
)

// MarkerName is the planned-stop marker's file name in a profile dir.
const MarkerName = ".gateway-planned-stop.json"

// ErrBadStat reports a /proc/<pid>/stat that could not be parsed.
var ErrBadStat = errors.New("unparsable /proc stat")

// marker is the planned-stop marker, fields in the order hermes writes them.
type marker struct {
	TargetPID       int    `json:"target_pid"`
	TargetStartTime uint64 `json:"target_start_time"`
	StopperPID      int    `json:"stopper_pid"`
	WrittenAt       string `json:"written_at"`
}

// WriteMarker writes the planned-stop marker at path for the gateway
// process targetPID, just before a requested stop sends it SIGTERM: the
// gateway checks that pid and start time are its own, then persists
// "stopped" and exits 0 instead of "running" (container going down). The
// start time (field 22 of /proc/<pid>/stat) tells a recycled PID apart.
func WriteMarker(path string, targetPID int, now time.Time) error {
	start, err := StartTime(targetPID)
	if err != nil {
		return fmt.Errorf("write marker %s: %w", path, err)
	}
	data, _ := json.Marshal(marker{
		TargetPID:       targetPID,
		TargetStartTime: start,
		StopperPID:      os.Getpid(),
		WrittenAt:       Timestamp(now),
	})
	if err := asuser.WriteFileAtomic(path, data, newFileMode); err != nil {
		return fmt.Errorf("write marker: %w", err)
	}
	return nil
}

// StartTime returns the start time of process pid in clock ticks since
// boot: field 22 of /proc/<pid>/stat.
func StartTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("start time of pid %d: %w", pid, err)
	}
	t, err := parseStartTime(b)
	if err != nil {
		return 0, fmt.Errorf("start time of pid %d: %w", pid, err)
	}
	return t, nil
}

// parseStartTime extracts field 22 from the text of /proc/<pid>/stat. Field
// 2, comm, is in parentheses and may itself hold spaces and parentheses, so
// the fields are counted from the last ')': field 3 follows it.
func parseStartTime(stat []byte) (uint64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("%w: no comm", ErrBadStat)
	}
	fields := bytes.Fields(stat[i+1:])
	const idx = 22 - 3
	if len(fields) <= idx {
		return 0, fmt.Errorf("%w: %d fields after comm", ErrBadStat, len(fields))
	}
	t, err := strconv.ParseUint(string(fields[idx]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: starttime: %v", ErrBadStat, err)
	}
	return t, nil
}
