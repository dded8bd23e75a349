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
//
// It takes time and memory in proportion to s (and what it writes), however
// deeply defaults nest: the "}" closing each "${" is found in one pass
// first, and a default is written into the one result. Looking for it from
// each default, with a result per level, cost a 64 KiB string of 13,000
// nested defaults (a scandir definition's) 440 MiB at every start, and
// one of 13,000 unclosed "${" a fifth of a second.
func Expand(s string, env map[string]string) string {
	if strings.IndexByte(s, '$') < 0 {
		return s
	}
	x := expansion{s: s, env: env}
	x.findClosings()
	var b strings.Builder
	b.Grow(len(s))
	x.into(&b, 0, len(s))
	return b.String()
}

// expansion is one Expand of s: where each "${" of s opens (opens, in
// order) and the index of the "}" that closes it (closes, -1 for none).
type expansion struct {
	s      string
	env    map[string]string
	opens  []int
	closes []int
}

// findClosings pairs each "${" with the "}" that closes it: the first "}"
// after it not taken by a "${" opened since, as a default word is read
// (a "}" with no "${" open is text).
func (x *expansion) findClosings() {
	s := x.s
	var open []int // indexes into opens of the "${" not closed yet
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			open = append(open, len(x.opens))
			x.opens = append(x.opens, i)
			x.closes = append(x.closes, -1)
			i++
		case s[i] == '}' && len(open) > 0:
			x.closes[open[len(open)-1]] = i
			open = open[:len(open)-1]
		}
	}
}

// closing is the index of the "}" closing the "${" at i, or -1.
func (x *expansion) closing(i int) int {
	k, ok := slices.BinarySearch(x.opens, i)
	if !ok {
		return -1
	}
	return x.closes[k]
}

// into writes the expansion of s[from:to] to b.
func (x *expansion) into(b *strings.Builder, from, to int) {
	s := x.s
	for i := from; i < to; {
		if s[i] != '$' || i+1 == to {
			b.WriteByte(s[i])
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
		case '{':
			if next, ok := x.braced(b, i, to); ok {
				i = next
				continue
			}
			b.WriteString("${")
			i += 2
		default:
			b.WriteByte('$')
			i++
		}
	}
}

// braced expands the "${" at i, within s[:to]: NAME}, NAME:-word} or
// NAME-word}. It writes the value to b and returns where what it used
// ends, or writes nothing and returns false when what follows is not one
// of these forms.
func (x *expansion) braced(b *strings.Builder, i, to int) (int, bool) {
	rest := x.s[i+2 : to]
	n := varNameLen(rest)
	if n == 0 || n == len(rest) {
		return 0, false
	}
	val, set := x.env[rest[:n]]
	if rest[n] == '}' {
		b.WriteString(val)
		return i + 2 + n + 1, true
	}
	op := 0
	switch {
	case strings.HasPrefix(rest[n:], ":-"):
		op = 2
	case rest[n] == '-':
		op = 1
	default:
		return 0, false
	}
	end := x.closing(i)
	if end < 0 || end >= to {
		return 0, false
	}
	if !set || op == 2 && val == "" {
		x.into(b, i+2+n+op, end)
	} else {
		b.WriteString(val)
	}
	return end + 1, true
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
