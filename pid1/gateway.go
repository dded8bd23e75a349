package pid1

import (
	"path/filepath"
	"strings"
	"time"

	"hinit/account"
	"hinit/asuser"
	"hinit/config"
	"hinit/control"
	"hinit/gwstate"
	"hinit/supervise"
)

// recordDesired writes what a user asked of a gateway into its profile's
// gateway_state.json (SPEC §4): desired_state running for start and restart,
// stopped for stop, with updated_at; every other field kept. It writes as
// the image's user, never through a symlink, so the next boot's reconcile
// brings back exactly what the user wanted. A container shutdown writes
// nothing: a running gateway stays "running" for the next boot.
func (h *hinit) recordDesired(s *supervise.Service, verb string) {
	st := s.Status()
	if h.set.cfg.Reconcile == nil || !h.isGateway(st) {
		return
	}
	desired := gwstate.Running
	if verb == control.VerbStop {
		desired = gwstate.Stopped
	}
	path := h.stateFile(strings.TrimPrefix(st.Name, h.gatewayTemplate()+"-"))
	err := h.asUser(func() error { return gwstate.SetDesired(path, desired, time.Now()) })
	if err != nil {
		h.log.Warn("desired state not recorded", "svc", st.Name, "path", path, "err", err)
	}
}

// hermesHome is $HERMES_HOME as reconcile configures it, with symlinks in
// the path of the volume itself resolved once (files below it are never
// reached through a symlink).
func (h *hinit) hermesHome() string {
	home := config.Expand(h.set.cfg.Reconcile.Home, h.containerEnv())
	if resolved, err := filepath.EvalSymlinks(home); err == nil {
		return resolved
	}
	return home
}

// stateFile is the gateway_state.json of a profile: the root profile
// "default" lives at $HERMES_HOME itself (SPEC §1).
func (h *hinit) stateFile(profile string) string {
	dir := h.hermesHome()
	if profile != "default" {
		dir = filepath.Join(dir, "profiles", profile)
	}
	return filepath.Join(dir, "gateway_state.json")
}

// writeMarker writes a gateway's planned-stop marker as the gateway's own
// user before a requested stop (SPEC §1): the gateway then records
// "stopped" and exits 0 instead of "running".
func writeMarker(path string, pid int, owner *account.Account) error {
	id := asuser.ID{UID: owner.UID, GID: owner.GID, Groups: owner.Groups}
	return asuser.Do(id, func() error { return gwstate.WriteMarker(path, pid, time.Now()) })
}
