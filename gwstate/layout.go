package gwstate

import (
	"path/filepath"
	"strings"

	"hinit/svcname"
)

// The layout of $HERMES_HOME (SPEC §1), as hermes keeps it: the root
// profile "default" lives at the home itself, a named profile at
// profiles/<name>; each has its own gateway_state.json, and a dir is a
// real profile when it holds SOUL.md.
const (
	DefaultProfile = "default"
	ProfilesDir    = "profiles"
	StateFileName  = "gateway_state.json"
	SoulFile       = "SOUL.md"
)

// Home is a resolved $HERMES_HOME: the root of the profile layout.
type Home string

// ResolveHome resolves the symlinks in path once: they are the operator's
// (a volume mounted through a link), not planted ones. Below the home,
// nothing is ever followed. A path that cannot be resolved is used as it
// is.
func ResolveHome(path string) Home {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return Home(resolved)
	}
	return Home(path)
}

// ProfileDir is the dir of a profile.
func (h Home) ProfileDir(profile string) string {
	if profile == DefaultProfile {
		return string(h)
	}
	return filepath.Join(string(h), ProfilesDir, profile)
}

// Profiles is the dir that holds the named profiles.
func (h Home) Profiles() string { return filepath.Join(string(h), ProfilesDir) }

// StateFile is the gateway_state.json of a profile.
func (h Home) StateFile(profile string) string {
	return filepath.Join(h.ProfileDir(profile), StateFileName)
}

// Slot is the name of the gateway service (its scandir slot) of a profile:
// <template>-<profile>.
func Slot(template, profile string) string { return svcname.Join(template, profile) }

// ProfileOf is the profile whose gateway slot is the service slot, when
// slot is an instance of template.
func ProfileOf(template, slot string) (string, bool) {
	profile, ok := strings.CutPrefix(slot, svcname.Join(template, ""))
	if !ok || !svcname.ValidProfile(profile) { // "gateway-coder/log" is a logger, no profile's
		return "", false
	}
	return profile, true
}
