package reconcile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"hinit/asuser"

	"golang.org/x/sys/unix"
)

// bootLogTime is the timestamp of a boot log line, as container_boot.py
// writes it (strftime "%Y-%m-%dT%H:%M:%S%z"): 2026-05-21T06:18:05+0000.
const bootLogTime = "2006-01-02T15:04:05-0700"

// formatBootLog renders one line per action, with hermes' newest
// container_boot's prior_exit last, then one line per skipped profile
// (action=skipped, one of hermes' own labels): nothing of it was read.
func formatBootLog(now time.Time, actions []Action, skipped []string) []byte {
	ts := now.Format(bootLogTime)
	var b strings.Builder
	for _, a := range actions {
		fmt.Fprintf(&b, "%s profile=%s prior_state=%s action=%s prior_exit=%s\n", ts, a.Profile, a.Prior, a.Label(), a.PriorExit)
	}
	for _, name := range skipped {
		fmt.Fprintf(&b, "%s profile=%s prior_state=unknown action=skipped prior_exit=unknown\n", ts, name)
	}
	return []byte(b.String())
}

// appendBootLog appends data to home/logs/container-boot.log, creating
// the logs dir if needed and first renaming a log of bootLogMax bytes or
// more to container-boot.log.1. Nothing on the way is followed if it is a
// symlink. A failed rotation is returned as warn and the append goes on.
func appendBootLog(home string, data []byte) (warn, err error) {
	dir := filepath.Join(home, "logs")
	if err := asuser.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("boot log: %w", err)
	}
	p := filepath.Join(dir, BootLog)
	if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && st.Size() >= bootLogMax {
		if err := unix.Rename(p, p+".1"); err != nil {
			warn = fmt.Errorf("boot log: rotate %s: %w", p, err)
		}
	}
	f, err := asuser.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return warn, fmt.Errorf("boot log: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return warn, fmt.Errorf("boot log: %s is not a regular file", p)
	}
	if _, err := f.Write(data); err != nil {
		return warn, fmt.Errorf("boot log: write %s: %w", p, err)
	}
	return warn, nil
}
