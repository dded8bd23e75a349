package hsvc

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"hinit/control"
	"hinit/signame"
)

// formatTable renders services as the human status table: NAME STATE PID
// UPTIME RESTARTS LAST-EXIT, and a REASON column when some service has one
// to show (reason).
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
	for _, row := range rows {
		for i, cell := range row {
			row[i] = printable(cell)
		}
	}
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
// one: since it was spawned (UpSince), not since it entered its state
// (ready, stopping).
func uptime(s control.Status, now time.Time) string {
	since := s.UpSince
	if since.IsZero() {
		since = s.Since // from a hinit that did not send up_since
	}
	if s.PID <= 0 || since.IsZero() {
		return "-"
	}
	return shortDuration(now.Sub(since))
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
// way a shell does, SIGKILL for a death by signal, SIGKILL (OOM) for one
// put down to the OOM killer, 2 (pids limit) for a failure put down to the
// container's pids limit, - when there is none.
func lastExit(e *control.Exit) string {
	if e == nil {
		return "-"
	}
	text := strconv.Itoa(e.Code)
	switch {
	case e.Signal != "":
		text = "SIG" + e.Signal // a name this hsvc does not know
		if sig, err := signame.Parse(e.Signal); err == nil {
			text = signame.Text(sig) // as hinit's messages name it: SIGRTMIN+6
		}
	case signame.OfStatus(e.Code) != 0:
		text = fmt.Sprintf("%d (%s)", e.Code, signame.Name(signame.OfStatus(e.Code)))
	}
	switch {
	case e.OOM:
		text += " (OOM)"
	case e.PidsLimit:
		text += " (pids limit)"
	}
	return text
}

// reason is the why of a service that is not up (a running service's old
// reason would only mislead), then, whatever its state, why its dir's new
// definition is not applied and how many of its log lines were lost (SPEC
// §3: counted and reported in status; hinit's own log says why).
func reason(s control.Status) string {
	var parts []string
	if s.State != "up" && s.Reason != "" {
		parts = append(parts, s.Reason)
	}
	if s.NotApplied != "" {
		parts = append(parts, "its dir's new definition is not applied: "+s.NotApplied)
	}
	switch {
	case s.LostLines == 1:
		parts = append(parts, "1 log line lost")
	case s.LostLines > 1:
		parts = append(parts, strconv.FormatUint(s.LostLines, 10)+" log lines lost")
	}
	return strings.Join(strings.Fields(strings.Join(parts, "; ")), " ")
}

// printable is s with every control character (C0, DEL, C1), bidirectional
// control and invalid byte written as an escape (\x1b, \u202e): names,
// paths and reasons come from whoever owns a service, and hsvc runs in
// root's terminal too.
func printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unprintable) {
		return s
	}
	return string(appendEscaped(nil, []byte(s), false))
}

// appendEscaped appends p to b escaped as printable does, but for newlines
// and tabs when lines is set (a log's text).
func appendEscaped(b, p []byte, lines bool) []byte {
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case lines && (r == '\n' || r == '\t'):
			b = append(b, byte(r))
		case r == utf8.RuneError && n == 1:
			b = fmt.Appendf(b, `\x%02x`, p[i])
		case unprintable(r) && r < 0x100:
			b = fmt.Appendf(b, `\x%02x`, r)
		case unprintable(r):
			b = fmt.Appendf(b, `\u%04x`, r)
		default:
			b = append(b, p[i:i+n]...)
		}
		i += n
	}
	return b
}

func unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
