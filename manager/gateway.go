package manager

import (
	"time"

	"hinit/account"
	"hinit/asuser"
	"hinit/config"
	"hinit/control"
	"hinit/gwstate"
	"hinit/supervise"
)

// gateways is what the manager knows of hermes gateways: which services
// are instances of the gateway template, and where each profile keeps its
// gateway_state.json.
type gateways struct {
	rc      *config.Reconcile // nil: no reconcile, nothing recorded
	environ func() map[string]string
}

func newGateways(rc *config.Reconcile, environ func() map[string]string) gateways {
	return gateways{rc: rc, environ: environ}
}

// template is the gateway template: the one reconcile names, else "gateway".
func (g gateways) template() string {
	if g.rc != nil && g.rc.Template != "" {
		return g.rc.Template
	}
	return "gateway"
}

// isGateway reports whether st is an instance of the gateway template.
func (g gateways) isGateway(st supervise.Status) bool {
	return st.Source.Template() == g.template()
}

// home is $HERMES_HOME as reconcile configures it, in the container
// environment of now, resolved as reconcile resolves it.
func (g gateways) home() gwstate.Home {
	return gwstate.ResolveHome(config.Expand(g.rc.Home, g.environ()))
}

// applyDesired records what verb asks of s (recordDesired) and applies it,
// under one lock with every other record.
func (m *Manager) applyDesired(s *supervise.Service, verb string, apply func() error) error {
	m.desiredMu.Lock()
	defer m.desiredMu.Unlock()
	m.recordDesired(s, verb)
	return apply()
}

// recordDesired writes what a user asked of a gateway into its profile's
// gateway_state.json (SPEC §4): desired_state running for start and restart,
// stopped for stop, with updated_at; every other field kept. It writes as
// the image's user, never through a symlink, so the next boot's reconcile
// brings back exactly what the user wanted. A container shutdown writes
// nothing: a running gateway stays "running" for the next boot.
func (m *Manager) recordDesired(s *supervise.Service, verb string) {
	st := s.Status()
	if m.gw.rc == nil || !m.gw.isGateway(st) {
		return
	}
	desired := gwstate.Running
	if verb == control.VerbStop {
		desired = gwstate.Stopped
	}
	profile, ok := gwstate.ProfileOf(m.gw.template(), st.Name)
	if !ok {
		return
	}
	path := m.gw.home().StateFile(profile)
	err := m.asUser(func() error { return gwstate.SetDesired(path, desired, time.Now()) })
	if err != nil {
		m.log.Warn("desired state not recorded", "svc", st.Name, "path", path, "err", err)
	}
}

// writeMarker writes a gateway's planned-stop marker as the gateway's own
// user before a requested stop (SPEC §1): the gateway then records
// "stopped" and exits 0 instead of "running".
func writeMarker(path string, pid int, owner *account.Account) error {
	id := asuser.ID{UID: owner.UID, GID: owner.GID, Groups: owner.Groups}
	return asuser.Do(id, func() error { return gwstate.WriteMarker(path, pid, time.Now()) })
}
