package config

import (
	"hinit/signame"
	"hinit/svcname"

	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"
)

// durationTo decodes a Go duration ("500ms", "5m") into *dst. Negative
// durations are refused, and zero too unless zeroOK.
func (d *decoder) durationTo(dst *time.Duration, n *yaml.Node, path string, zeroOK bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.at(n, path, "expected a duration (Go syntax, e.g. 500ms, 5m), got %s", describe(n))
		return
	}
	v, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		d.at(n, path, "%s is not a duration (expected Go syntax, e.g. 500ms, 5m)", quote(n.Value))
	case v < 0:
		d.at(n, path, "%s is negative, expected a duration of 0 or more", quote(n.Value))
	case v == 0 && !zeroOK:
		d.at(n, path, "%s is zero, expected a duration above 0 (e.g. 500ms, 5m)", quote(n.Value))
	default:
		*dst = v
	}
}

// sizeTo decodes a byte size above 0 into *dst: plain bytes or a number
// with a unit (see parseSize).
func (d *decoder) sizeTo(dst *int64, n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.at(n, path, "expected a size (e.g. 1MiB, 512KiB, 1MB, 10K or bytes), got %s", describe(n))
		return
	}
	v, err := parseSize(n.Value)
	switch {
	case err != nil:
		d.at(n, path, "%s is not a size (expected bytes or a number with B, K, KiB, KB, M, MiB, MB, G, GiB, GB)", quote(n.Value))
	case v == 0:
		d.at(n, path, "%s is zero, expected a size above 0", quote(n.Value))
	default:
		*dst = v
	}
}

// sizeUnits maps a lower-cased unit to bytes. K, M and G are binary, as in
// docker and logrotate; KB, MB and GB are decimal.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1000,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000,
}

// parseSize parses "1MiB", "512KiB", "1MB", "10K" or "4096".
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: no number", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit", s)
	}
	if n > math.MaxInt64/unit {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * unit, nil
}

// exitCode decodes an exit status, 0..255.
func (d *decoder) exitCode(n *yaml.Node, path string) (int, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.at(n, path, "expected an exit code (0..255), got %s", describe(n))
		return 0, false
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < 0 || v > 255 {
		d.at(n, path, "%s is not an exit code (expected 0..255)", quote(n.Value))
		return 0, false
	}
	return v, true
}

// exitCodes decodes a list of exit statuses.
func (d *decoder) exitCodes(n *yaml.Node, path string) []int {
	var out []int
	for i, c := range d.items(n, path) {
		if v, ok := d.exitCode(c, index(path, i)); ok {
			out = append(out, v)
		}
	}
	return out
}

// remapExit decodes a mapping of exit status to exit status.
func (d *decoder) remapExit(n *yaml.Node, path string) map[int]int {
	entries := d.entries(n, path)
	if len(entries) == 0 {
		return nil
	}
	out := make(map[int]int, len(entries))
	for _, e := range entries {
		from, ok1 := d.exitCode(e.k, path)
		to, ok2 := d.exitCode(e.v, join(path, e.key))
		if ok1 && ok2 {
			out[from] = to
		}
	}
	return out
}

// signal decodes a signal name and returns it without "SIG".
func (d *decoder) signal(n *yaml.Node, path string) string {
	s, ok := d.strOK(n, path)
	if !ok {
		return ""
	}
	sig, err := signame.Parse(s)
	if err != nil {
		d.at(n, path, "%s is not a signal (expected e.g. TERM, SIGTERM, INT, HUP or a number)", quote(s))
		return ""
	}
	return signame.Name(sig)
}

// oneOf decodes a string that must be one of the allowed values; what names
// the kind of value for the message.
func (d *decoder) oneOf(n *yaml.Node, path, what string, allowed ...string) string {
	s, ok := d.strOK(n, path)
	if !ok {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	d.at(n, path, "%s is not %s (%s)", quote(s), what, strings.Join(allowed, ", "))
	return ""
}

// argv decodes a command: a list of arguments, or one string that is run
// by /bin/sh -c.
func (d *decoder) argv(n *yaml.Node, path string) []string {
	switch {
	case isNull(n):
		return nil
	case n.Kind == yaml.SequenceNode:
		argv := d.strList(n, path)
		// exec cannot run "": say so now rather than at each start. A
		// ${VAR} that expands to nothing is for the start to report.
		if len(argv) > 0 {
			if first := Unalias(n.Content[0]); isNull(first) || first.Kind == yaml.ScalarNode && first.Value == "" {
				d.at(first, index(path, 0), "is empty, expected the program to run")
			}
		}
		return argv
	case n.Kind == yaml.ScalarNode:
		if s := d.str(n, path); s != "" {
			return []string{"/bin/sh", "-c", s}
		}
		return nil
	}
	d.at(n, path, "expected a list of arguments or a shell command string, got %s", describe(n))
	return nil
}

// command decodes a required, non-empty command.
func (d *decoder) command(n *yaml.Node, path string) []string {
	argv := d.argv(n, path)
	if len(argv) == 0 && (isNull(n) || n.Kind != yaml.MappingNode) {
		d.at(n, path, "is empty, expected a list of arguments or a shell command string")
	}
	return argv
}

// env decodes a mapping of environment variables.
func (d *decoder) env(n *yaml.Node, path string) map[string]string {
	entries := d.entries(n, path)
	if len(entries) == 0 {
		return nil
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if err := svcname.CheckEnv(e.key); err != nil {
			d.at(e.k, path, "%v", err)
			continue
		}
		out[e.key] = d.str(e.v, join(path, e.key))
	}
	return out
}

// user decodes a user: a name, a uid or uid:gid. Values holding ${VAR} or
// {instance} are checked only once expanded, when the service starts.
func (d *decoder) user(n *yaml.Node, path string) string {
	u := d.str(n, path)
	if !validUser(u) {
		d.at(n, path, "%s is not a user (expected a name, uid or uid:gid)", quote(u))
	}
	return u
}

func validUser(u string) bool {
	if u == "" || strings.ContainsAny(u, "${") {
		return true
	}
	if uid, gid, ok := strings.Cut(u, ":"); ok {
		return isID(uid) && isID(gid)
	}
	return isID(u) || validAccount(u)
}

// isID reports a decimal uid or gid (not -1, which means "unchanged").
func isID(s string) bool {
	v, err := strconv.ParseUint(s, 10, 32)
	return err == nil && v != math.MaxUint32
}

// validAccount reports a user name as useradd accepts it.
func validAccount(s string) bool {
	if len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
		switch {
		case letter:
		case i > 0 && ('0' <= c && c <= '9' || c == '.' || c == '-'):
		case i > 0 && i == len(s)-1 && c == '$':
		default:
			return false
		}
	}
	return true
}

// absPath decodes a path that must be absolute: relative to what, for a
// program started by PID 1? Values holding ${VAR} or {instance} are checked
// only once expanded. A path longer than MaxPath, or with a control
// character, names nothing anyone meant: hsvc status copies log.dir into
// every row of every answer, where 60 KB of '<' (6 bytes each in JSON) in
// a thousand scandir definitions made one answer a gigabyte of PID 1.
func (d *decoder) absPath(n *yaml.Node, path string) string {
	p := d.str(n, path)
	switch {
	case len(p) > MaxPath:
		d.at(n, path, "a path of %d bytes: at most %d", len(p), MaxPath)
		return ""
	case strings.ContainsFunc(p, unicode.IsControl):
		d.at(n, path, "%s holds a control character", quote(p))
		return ""
	case p != "" && !strings.HasPrefix(p, "/") && !strings.ContainsAny(p, "${"):
		d.at(n, path, "%s is not an absolute path (expected /... or ${VAR}/...)", quote(p))
	}
	return p
}

// MaxPath is the longest path a definition may give: PATH_MAX (4096) with
// its NUL, past which no system call takes one.
const MaxPath = 4095
