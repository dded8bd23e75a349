package config

import (
	"maps"
	"slices"
	"strings"
)

// Expand replaces ${VAR} by the value of VAR in env, and ${VAR:-default} by
// default when VAR is unset or empty, as sh does (${VAR-default}: only when
// unset). default may itself hold ${...}. $$ is a literal $. Anything else,
// $VAR included, is left as written, so a shell command keeps its own
// variables for the shell.
func Expand(s string, env map[string]string) string {
	if strings.IndexByte(s, '$') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
		case '{':
			if val, n, ok := expandBraced(s[i+2:], env); ok {
				b.WriteString(val)
				i += 2 + n
				continue
			}
			b.WriteString("${")
			i += 2
		default:
			b.WriteByte('$')
			i++
		}
	}
	return b.String()
}

// expandBraced expands what follows "${": NAME}, NAME:-word} or NAME-word}.
// It returns the value and how many bytes it used, or false when rest is
// not one of these forms.
func expandBraced(rest string, env map[string]string) (string, int, bool) {
	n := varNameLen(rest)
	if n == 0 || n == len(rest) {
		return "", 0, false
	}
	name := rest[:n]
	val, set := env[name]
	if rest[n] == '}' {
		return val, n + 1, true
	}
	op := 0
	switch {
	case strings.HasPrefix(rest[n:], ":-"):
		op = 2
	case rest[n] == '-':
		op = 1
	default:
		return "", 0, false
	}
	end := closingBrace(rest[n+op:])
	if end < 0 {
		return "", 0, false
	}
	used := n + op + end + 1
	if !set || op == 2 && val == "" {
		return Expand(rest[n+op:n+op+end], env), used, true
	}
	return val, used, true
}

// varNameLen returns the length of the variable name [A-Za-z_][A-Za-z0-9_]*
// at the start of s.
func varNameLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9') {
			return i
		}
	}
	return len(s)
}

// closingBrace returns the index of the "}" that closes a default word,
// skipping nested ${...}, or -1.
func closingBrace(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			depth++
			i++
		case s[i] == '}' && depth == 0:
			return i
		case s[i] == '}':
			depth--
		}
	}
	return -1
}

// TruthySpellings and FalsySpellings are the values Truthy and Falsy
// accept, in any case, for messages and documentation.
const (
	TruthySpellings = "1, true, yes, on"
	FalsySpellings  = "0, false, no, off or empty"
)

// Truthy reports whether s means yes: "1", "true", "yes" or "on" in any
// case, surrounding blanks ignored. Everything else, "" included, is false.
func Truthy(s string) bool {
	s = strings.TrimSpace(s)
	return s == "1" || strings.EqualFold(s, "true") || strings.EqualFold(s, "yes") || strings.EqualFold(s, "on")
}

// Falsy reports whether s plainly means no: "", "0", "false", "no" or
// "off" in any case, surrounding blanks ignored. A value that is neither
// Truthy nor Falsy (HERMES_DASHBOARD=enable) counts as no, and deserves a
// warning.
func Falsy(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || s == "0" || strings.EqualFold(s, "false") || strings.EqualFold(s, "no") || strings.EqualFold(s, "off")
}

// Expanded returns a deep copy of s with Expand applied, against env, to
// every string field that may hold ${VAR}: command, user, workdir, env
// values, enabled, log.dir, stop.planned_stop_marker and ready.tcp. s is
// not modified, so one parsed service serves every start.
//
// An enabled that is set but expands to "" (enabled: "${HERMES_DASHBOARD}"
// with the variable unset) becomes "false": only an enabled left out of
// the file means enabled, so IsEnabled on the copy gives the right answer.
func (s *Service) Expanded(env map[string]string) *Service {
	c := s.clone()
	c.mapStrings(func(v string) string { return Expand(v, env) })
	if s.Enabled != "" && c.Enabled == "" {
		c.Enabled = "false"
	}
	return c
}

// IsEnabled reports whether an expanded service should be up at boot:
// enabled is absent or truthy. Call it on the result of Expanded; on a
// service as parsed, enabled still holds ${VAR} and is not truthy.
func (s *Service) IsEnabled() bool {
	return s.Enabled == "" || Truthy(s.Enabled)
}

// mapStrings replaces, in place, each string field that holds values from
// the file (not the name, source or enumerations) by f of it.
func (s *Service) mapStrings(f func(string) string) {
	for i, a := range s.Command {
		s.Command[i] = f(a)
	}
	s.User = f(s.User)
	s.Workdir = f(s.Workdir)
	for k, v := range s.Env {
		s.Env[k] = f(v)
	}
	s.Enabled = f(s.Enabled)
	s.Log.Dir = f(s.Log.Dir)
	s.Stop.PlannedStopMarker = f(s.Stop.PlannedStopMarker)
	s.Ready.TCP = f(s.Ready.TCP)
}

// clone returns a deep copy of s: no slice, map or pointer is shared.
func (s *Service) clone() *Service {
	c := *s
	c.Command = slices.Clone(s.Command)
	c.NoRestartExitCodes = slices.Clone(s.NoRestartExitCodes)
	c.RestartNowExitCodes = slices.Clone(s.RestartNowExitCodes)
	c.Env = maps.Clone(s.Env)
	if s.Log.Console != nil {
		on := *s.Log.Console
		c.Log.Console = &on
	}
	return &c
}
