// Package svcname holds the one rule for the names of services and hermes
// profiles (SPEC §3, §5), shared by the configuration, the scandir watcher
// and the control protocol so that all three always agree. It is a leaf
// without dependencies: hsvc links it too.
package svcname

// MaxLen is the longest service name: a scandir dir name that still fits a
// file name (255 bytes) once a writer adds ".tmp" to build it.
const MaxLen = 251

// Rules as they appear in messages.
const (
	Rule        = "^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes"
	ProfileRule = "^[a-z0-9][a-z0-9_-]*$, at most 251 bytes"
)

// Valid reports whether name may name a service (or a template):
// ^[a-z0-9][a-z0-9_.-]*$, at most MaxLen bytes. Such a name is safe as a
// single path element: no "/", no leading ".", never "." or "..", so a
// writer's temporary ".name.tmp" dir is never a service.
func Valid(name string) bool { return len(name) <= MaxLen && validChars(name, true) }

// ValidProfile reports whether name may name a hermes profile, and so a
// template instance: ^[a-z0-9][a-z0-9_-]*$ (no dot), at most MaxLen bytes.
func ValidProfile(name string) bool { return len(name) <= MaxLen && validChars(name, false) }

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
