// Package reconcile makes `docker restart` invisible to gateways (SPEC §5):
// at boot, before any service starts, it publishes one scandir slot
// gateway-<profile> per hermes profile, up when the profile's gateway was
// meant to be running and down (a `down` file) otherwise, removes the PID
// files a previous container left, and appends what it did to
// $HERMES_HOME/logs/container-boot.log.
//
// It also owns Publish, the one way a slot is built and renamed into the
// scandir, which `hsvc register` uses too.
//
// Everything here runs with the rights of the hermes user: hinit calls Run
// inside asuser.Do. Run starts no goroutine, so all its work stays on the
// thread that carries that identity. On top of that it never follows a
// symlink inside $HERMES_HOME: a planted link is skipped or replaced and
// reported, the file it points to is never read or written.
package reconcile

import (
	"errors"
	"log/slog"
	"time"
)

// Errors of Publish and Run.
var (
	ErrInvalid = errors.New("invalid name") // a template, instance or env key that cannot be published
	ErrExists  = errors.New("already registered")
)

// Options are the inputs of Run.
type Options struct {
	Home     string // $HERMES_HOME, the root profile's dir; symlinks in this path itself are resolved once
	Scandir  string // where slots are published
	Template string // template the slots name, e.g. "gateway"
	// Slots bounds the gateway slots published, the root's included
	// (services_max: the scandir takes no more), to the first profiles by
	// name; 0: no bound.
	Slots     int
	Bootstrap string            // $HERMES_GATEWAY_BOOTSTRAP_STATE; "running" seeds the root gateway_state.json
	Env       map[string]string // the container environment: HERMES_RESTART_DRAIN_TIMEOUT, GATEWAY_MULTIPLEX_PROFILES
	Now       func() time.Time  // nil: time.Now
	Logger    *slog.Logger      // nil: discard
}

// Action is what Run did for one profile, for hinit's log.
type Action struct {
	Profile string // "default" for $HERMES_HOME itself
	Prior   string // desired state read, or "none"
	// PriorExit is how the profile's last gateway life ended:
	// gwstate.PriorExit's clean, unclean or unknown.
	PriorExit string
	Start     bool   // published up (no down file)
	Warning   string // why the slot is down despite no state saying so (a missing state file is no reason: never started), or "" when all went well
	// Multiplexed: a named profile the default gateway serves
	// (multiplex_profiles, not gateway.standalone), registered down
	// whatever its state says.
	Multiplexed bool
	// Folded: a multiplexed profile whose running intent moved to the
	// root slot; on the root slot, that it starts only for such
	// profiles, its own state not saying running.
	Folded bool
	// StopTimeout is the slot's stop timeout: hermes' stop budget for
	// the profile's drains (SlotStopTimeout).
	StopTimeout time.Duration
	// Drain is the drain budget the profile or the environment asked
	// for (SlotStopTimeout's asked); 0 when none is set.
	Drain time.Duration
}

// Label is the action word of the boot log: "started" or "registered".
func (a Action) Label() string {
	if a.Start {
		return "started"
	}
	return "registered"
}

// Names of the files reconcile reads, removes and writes.
const (
	BootLog    = "container-boot.log"
	bootLogMax = 256 << 10 // rotate to BootLog+".1" at this size
)

// staleFiles hold PIDs of a previous container's namespace.
var staleFiles = []string{"gateway.pid", "processes.json"}
