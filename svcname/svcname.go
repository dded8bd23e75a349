// Package svcname holds the one rule for the names of services, templates,
// hermes profiles (SPEC §3, §5) and environment variables, and the messages
// that explain it. The configuration, the scandir watcher, the control
// protocol and the boot reconcile all call it, so that they always agree on
// what a name is and say so in the same words. It is a leaf without dependencies: hsvc links
// it too.
package svcname

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Length limits, one per kind of name.
const (
	// MaxLen is the longest service (or template) name: a scandir dir
	// name that still fits a file name (255 bytes) once a writer adds
	// ".tmp" to build it.
	MaxLen = 251
	// MaxProfileLen is the longest hermes profile name, as hermes itself
	// allows it (hermes_cli/profiles.py: [a-z0-9][a-z0-9_-]{0,63}).
	MaxProfileLen = 64
)

// Rules as they appear in messages.
const (
	Rule        = "^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes"
	ProfileRule = "^[a-z0-9][a-z0-9_-]*$ (no dot), at most 64 bytes"
	EnvRule     = `not empty, no "=", no NUL`
)

// ErrInvalid matches (errors.Is) every error of the Check functions.
var ErrInvalid = errors.New("invalid name")

// nameError is an invalid name with the kind and rule it broke.
type nameError struct {
	kind, name, rule string
}

func (e *nameError) Error() string {
	return fmt.Sprintf("%s is not a valid %s name (expected %s)", Quote(e.name), e.kind, e.rule)
}

// Quote quotes a name for a message, cut to its first 64 bytes: a name
// too long to be valid must not make the message as long.
func Quote(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return strconv.Quote(s)
}

func (e *nameError) Is(target error) bool { return target == ErrInvalid }

// Valid reports whether name may name a service (or a template):
// ^[a-z0-9][a-z0-9_.-]*$, at most MaxLen bytes. Such a name is safe as a
// single path element: no "/", no leading ".", never "." or "..", so a
// writer's temporary ".name.tmp" dir is never a service.
func Valid(name string) bool { return len(name) <= MaxLen && validChars(name, true) }

// ValidProfile reports whether name may name a hermes profile, and so a
// template instance: ^[a-z0-9][a-z0-9_-]*$ (no dot), at most MaxProfileLen
// bytes.
func ValidProfile(name string) bool { return len(name) <= MaxProfileLen && validChars(name, false) }

// Check returns nil for a valid service name, else an error saying what
// the rule is.
func Check(name string) error { return check("service", name, Valid(name), Rule) }

// CheckTemplate is Check for a template's name.
func CheckTemplate(name string) error { return check("template", name, Valid(name), Rule) }

// ValidEnv reports whether name can be an environment variable's: what
// execve can carry. The environment dir (a file per variable) refuses more
// names still (contenvd: "/", a leading ".", over 255 bytes).
func ValidEnv(name string) bool { return name != "" && !strings.ContainsAny(name, "=\x00") }

// CheckEnv returns nil for a valid environment variable name.
func CheckEnv(name string) error {
	return check("environment variable", name, ValidEnv(name), EnvRule)
}

// CheckEnvVar checks an environment variable given to a service (hsvc
// register --env): its name (CheckEnv) and both as a service.yaml can hold
// them and a program can get them: valid UTF-8 (YAML's; JSON turns any
// other byte into U+FFFD, another variable than the one asked for) and no
// NUL in the value (the end of a C string).
func CheckEnvVar(name, value string) error {
	switch err := CheckEnv(name); {
	case err != nil:
		return err
	case !utf8.ValidString(name):
		return fmt.Errorf("environment variable %s: its name is not valid UTF-8", Quote(name))
	case !utf8.ValidString(value):
		return fmt.Errorf("environment variable %s: its value is not valid UTF-8", Quote(name))
	case strings.ContainsRune(value, 0):
		return fmt.Errorf("environment variable %s: its value holds a NUL byte", Quote(name))
	}
	return nil
}

// CheckInstance checks a template instance: the template's name, the
// instance as a profile name, and the service name they make together.
func CheckInstance(template, instance string) error {
	if err := CheckTemplate(template); err != nil {
		return err
	}
	if err := CheckInstanceName(instance); err != nil {
		return err
	}
	return Check(Join(template, instance))
}

// CheckInstanceName checks an instance name alone: a profile name.
func CheckInstanceName(instance string) error {
	return check("instance", instance, ValidProfile(instance), ProfileRule)
}

// Join is the service name of a template's instance: <template>-<instance>.
func Join(template, instance string) string { return template + "-" + instance }

func check(kind, name string, ok bool, rule string) error {
	if ok {
		return nil
	}
	return &nameError{kind, name, rule}
}

func validChars(s string, dot bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '-' || dot && c == '.'):
		default:
			return false
		}
	}
	return true
}
