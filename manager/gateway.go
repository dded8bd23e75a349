package manager

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// gateways is what the manager knows of hermes gateways: which services
// are instances of the gateway template, and where each profile keeps its
// gateway_state.json.
type gateways struct {
	rc *config.Reconcile // nil: no reconcile, nothing recorded
	// s6: compat s6-overlay, where today's hermes registers a profile
	// made at run time as an s6 dir named as the template's instance
	// (S6ServiceManager.register_profile_gateway); the next boot's
	// reconcile replaces it with a slot of the template.
	s6      bool
	environ func() map[string]string
}

func newGateways(cfg *config.Config, environ func() map[string]string) gateways {
	return gateways{rc: cfg.Reconcile, s6: cfg.S6(), environ: environ}
}

// template is the gateway template: the one reconcile names, else "gateway".
func (g gateways) template() string {
	if g.rc != nil && g.rc.Template != "" {
		return g.rc.Template
	}
	return "gateway"
}

// isGateway reports whether st is a profile's gateway: an instance of the
// gateway template, or under compat s6-overlay an s6 dir of such a name.
func (g gateways) isGateway(st supervise.Status) bool {
	return g.named(st.Name, st.Source)
}

// named reports whether the service name, defined by source, is a
// profile's gateway (isGateway).
func (g gateways) named(name string, source config.Source) bool {
	if source.Template() == g.template() {
		return true
	}
	if !g.s6 || source != config.SourceScandir {
		return false
	}
	_, ok := gwstate.ProfileOf(g.template(), name)
	return ok
}

// s6Marker gives def, read from an s6 dir, the planned-stop marker of its
// profile's slot when it is a profile's gateway (named): a requested stop
// then writes it first, as for a slot, and the gateway records "stopped"
// on its way out instead of "running".
func (m *Manager) s6Marker(def *config.Service) {
	if !m.gw.named(def.Name, def.Source) {
		return
	}
	profile, _ := gwstate.ProfileOf(m.gw.template(), def.Name)
	if slot, err := m.cfg.Render(config.Ref{Template: m.gw.template(), Instance: profile}); err == nil {
		def.Stop.PlannedStopMarker = slot.Stop.PlannedStopMarker
	}
}

// home is $HERMES_HOME as reconcile configures it, in the container
// environment of now, resolved as reconcile resolves it.
func (g gateways) home() (h gwstate.Home) {
	path := config.Expand(g.rc.Home, g.environ())
	asuser.Quiet(func() { h = gwstate.ResolveHome(path) }) // lstat of the volume's path
	return h
}

// errUnregistered is applyDesired's answer for a service unregistered
// since its caller looked it up.
var errUnregistered = errors.New("unregistered meanwhile")

// errGivenUp is applyDesired's answer for a request whose client left
// before its turn came.
var errGivenUp = errors.New("not applied: its client gave up waiting")

// applyDesired records what verb asks of s (recordDesired) and applies it,
// under s's request lock (lockRequest), with every other record of s and
// with unregister's removal of s from the group (which it does in its
// apply): a start racing an unregister neither records "running" for a
// gateway gone nor applies to it. A request whose client has left before
// its record could be written applies nothing (errGivenUp); one written
// is applied. The request is applied even when it could not be recorded:
// unrecorded says why, for the caller to tell. Once the container's
// shutdown has begun (Stopping) nothing starts, and a start or restart is
// refused before it is recorded: the gateway that runs now must come back.
// A stop whose signal could not be sent (no CAP_KILL) leaves the gateway
// as it was, and puts back what the next boot would have done before it
// (keptRunning), so that the next boot does not do what never happened.
func (m *Manager) applyDesired(ctx context.Context, s *supervise.Service, verb string, once bool, apply func() error) (unrecorded, err error) {
	defer m.lockRequest(s.Name())()
	if ctx.Err() != nil {
		// Its client gave up waiting ("hinit did not answer in time"):
		// applied now, it would land later, unasked.
		return nil, errGivenUp
	}
	if m.group.Get(s.Name()) != s {
		return nil, errUnregistered
	}
	if m.stopping.Load() && (verb == control.VerbStart || verb == control.VerbRestart) {
		return nil, supervise.ErrShuttingDown
	}
	var before string // a stop's: what the next boot would have done
	if verb == control.VerbStop && !once {
		before = m.bootIntent(ctx, s)
	}
	unrecorded = m.recordDesired(ctx, s, verb, once)
	if ctx.Err() != nil && unrecorded != nil {
		return nil, errGivenUp // nothing recorded: nothing applied either
	}
	if err = apply(); err != nil && unrecorded == nil && verb == control.VerbStop && keptRunning(before, s.Status()) {
		unrecorded = m.recordDesired(context.Background(), s, control.VerbStart, once) // what was recorded must be put back
	}
	return unrecorded, err
}

// keptRunning reports whether a gateway whose stop was not applied is to
// be recorded running again: what the next boot would have done before
// the stop (before), the record being the user's lasting wish, which a run
// once (start --once, s6-svc -o) leaves as it was. With no such record
// (none, or not readable): whether it runs on, or is wanted up and backs
// off to its restart (s6-svc -O set it down: then only a process still
// running counts).
func keptRunning(before string, st supervise.Status) bool {
	switch before {
	case gwstate.Running:
		return true
	case gwstate.Stopped:
		return false
	}
	return st.PID != 0 || st.Want == supervise.WantUp
}

// bootIntent is what the next boot would do with gateway s, read as the
// image's user: gwstate.Running, gwstate.Stopped, or "" when s is no
// gateway or nothing readable says.
func (m *Manager) bootIntent(ctx context.Context, s *supervise.Service) string {
	path, ok := m.statePath(s.Status())
	if !ok {
		return ""
	}
	var state string
	m.asUserCtx(ctx, func() error {
		state, _ = gwstate.ReadDesired(path)
		return nil
	})
	return state
}

// statePath is the state file of the gateway st is, if it is one.
func (m *Manager) statePath(st supervise.Status) (string, bool) {
	if m.gw.rc == nil || !m.gw.isGateway(st) {
		return "", false
	}
	profile, ok := gwstate.ProfileOf(m.gw.template(), st.Name)
	if !ok {
		return "", false
	}
	return m.gw.home().StateFile(profile), true
}

// recordDesired writes what a user asked of a gateway into its profile's
// gateway_state.json (SPEC §4): desired_state running for start and restart,
// stopped for stop, with updated_at; every other field kept. A run once
// (s6-svc -o, -O; start --once) is not a lasting wish and records nothing.
// It writes as the image's user, never through a symlink, so the next
// boot's reconcile brings back exactly what the user wanted. A container
// shutdown writes nothing: a running gateway stays "running" for the next
// boot. The error, when the wish could not be written, is the caller's to
// report: the next boot would undo the request.
func (m *Manager) recordDesired(ctx context.Context, s *supervise.Service, verb string, once bool) error {
	st := s.Status()
	path, ok := m.statePath(st)
	if !ok || once || verb == control.VerbOnce {
		return nil
	}
	desired := gwstate.Running
	if verb == control.VerbStop {
		desired = gwstate.Stopped
	}
	at := time.Now()
	err := m.asUserCtx(ctx, func() error { return gwstate.SetDesired(path, desired, at) })
	if errors.Is(err, fs.ErrNotExist) {
		// No profile dir (hermes profile delete removed it first): no
		// boot will start a gateway for it, there is nothing to keep.
		var serr error
		asuser.Quiet(func() { _, serr = os.Lstat(filepath.Dir(path)) }) // the profile dir, on hermes' volume
		if errors.Is(serr, fs.ErrNotExist) {
			return nil
		}
	}
	if err != nil {
		m.log.Warn("desired state not recorded", "svc", st.Name, "path", path, "err", err)
		return fmt.Errorf("desired_state %s not recorded: %w; after a container restart the gateway will be as before this request", desired, err)
	}
	m.settleDesired(path, at, maxSettles)
	return nil
}

// afterSettle runs f once the gateway's rewrites in flight have landed;
// a test runs f when it chooses (QueueSettles).
var afterSettle = func(f func()) { time.AfterFunc(gwstate.SettleAfter, f) }

// maxSettles bounds how many times one wish is written again when the
// gateway's rewrites keep undoing it; the last stays for the boot to read
// through (gwstate.Resolve).
const maxSettles = 3

// settleDesired reads the state file at path back SettleAfter after hinit
// wrote desired_state there at at, on a timer of its own: the gateway's
// rewrite may have undone the write, which is then written again and read
// back in turn (left times at most), or hinit's record of it is settled
// (gwstate.Settle). The record of a wish not read back (the manager ended
// first) stays unsettled, and the next boot reads through a revert.
func (m *Manager) settleDesired(path string, at time.Time, left int) {
	afterSettle(func() {
		if m.life.Err() != nil {
			return
		}
		var again bool
		now := time.Now()
		err := m.asUserCtx(m.life, func() (err error) {
			again, err = gwstate.Settle(path, at, now)
			return err
		})
		switch {
		case err != nil:
			m.log.Warn("desired state not read back: the next boot reads it from hinit's record", "path", path, "err", err)
		case again:
			m.log.Warn("the gateway's own rewrite of gateway_state.json undid desired_state: written again", "path", path)
			if left > 1 {
				m.settleDesired(path, now, left-1)
			}
		}
	})
}

// unrecordedAnswer answers a request that was applied to every service but
// recorded for the next boot only as far as notes (applyDesired) do not
// say: a failure, since the next boot would undo it, marked unrecorded
// (s6-svc, whose caller records desired_state itself, warns and succeeds).
func unrecordedAnswer(verb string, notes []string) *control.Response {
	if len(notes) == 0 {
		return control.OK()
	}
	r := control.Errorf(control.CodeFailed, "%s done, but %s", verb, strings.Join(notes, "; "))
	r.Unrecorded = true
	return r
}

// writeMarker writes a gateway's planned-stop marker as the gateway's own
// user before a requested stop (SPEC §1): the gateway then records
// "stopped" and exits 0 instead of "running".
func writeMarker(path string, pid int, owner *account.Account) error {
	return asuser.Do(owner.ID(), func() error { return gwstate.WriteMarker(path, pid, time.Now()) })
}
