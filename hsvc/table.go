package hsvc

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"hinit/control"
	"hinit/signame"
)

// formatTable renders services as the human status table: NAME STATE PID
// UPTIME RESTARTS LAST-EXIT, and a REASON column when some service that is
// not up has one.
func formatTable(services []control.Status, now time.Time) []byte {
	header := []string{"NAME", "STATE", "PID", "UPTIME", "RESTARTS", "LAST-EXIT"}
	rows := [][]string{header}
	withReason := false
	for _, s := range services {
		row := []string{s.Name, s.State, pid(s.PID), uptime(s, now), strconv.Itoa(s.Restarts), lastExit(s.LastExit)}
		if r := reason(s); r != "" {
			row = append(row, r)
			withReason = true
		}
		rows = append(rows, row)
	}
	if withReason {
		rows[0] = append(rows[0], "REASON")
	}
	return columns(rows)
}

// columns aligns rows in columns two spaces apart, without trailing
// blanks.
func columns(rows [][]string) []byte {
	var width []int
	for _, row := range rows {
		for i, cell := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(cell))
		}
	}
	var b bytes.Buffer
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			fmt.Fprintf(&line, "%-*s  ", width[i], cell)
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func pid(p int) string {
	if p <= 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

// uptime is how long the current process has run, for states that have
// one.
func uptime(s control.Status, now time.Time) string {
	if s.PID <= 0 || s.Since.IsZero() {
		return "-"
	}
	return shortDuration(now.Sub(s.Since))
}

// shortDuration is d at a glance: 42s, 3m12s, 2h05m, 4d3h.
func shortDuration(d time.Duration) string {
	d = max(d, 0)
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
}

// lastExit is 0, 143 (TERM) for an exit status that reports a signal the
// way a shell does, SIGKILL for a death by signal, - when there is none.
func lastExit(e *control.Exit) string {
	switch {
	case e == nil:
		return "-"
	case e.Signal != "":
		if _, err := strconv.Atoi(e.Signal); err == nil {
			return "signal " + e.Signal
		}
		return "SIG" + e.Signal
	case e.Code > 128 && e.Code <= 128+31:
		return fmt.Sprintf("%d (%s)", e.Code, signame.Name(syscall.Signal(e.Code-128)))
	}
	return strconv.Itoa(e.Code)
}

// reason is the why of a service that is not up; a running service's old
// reason would only mislead.
func reason(s control.Status) string {
	if s.State == "up" {
		return ""
	}
	return strings.Join(strings.Fields(s.Reason), " ")
}
