package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"hinit/gwstate"
	"hinit/svcname"
)

// Run reconciles every gateway slot with the desired state its profile
// recorded (SPEC §5), in this order: seed the root state file when
// Bootstrap is "running" and it is absent; for the root profile and each
// real named profile, read the desired state, remove stale PID files and
// publish the slot, up only when the state is "running" and, for a named
// profile, multiplexing is off (Multiplex), with the profile's drain budget
// as its stop timeout (DrainTimeout); then append one line per profile to
// the boot log.
//
// It returns one Action per published profile; hinit logs them. Run itself
// logs, once each, what has no Action: skipped profile dirs, cleanup
// failures and boot log trouble. The error joins the failures that left a
// profile without a slot; the other profiles are still published.
func Run(opts Options) ([]Action, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	home := gwstate.Home(opts.Home)        // resolved by withDefaults
	if opts.Bootstrap == gwstate.Running { // exactly, as hermes compares it
		seed(home.StateFile(gwstate.DefaultProfile), log)
	}
	multiplex := multiplexed(opts)
	profiles, listErr := listProfiles(home, opts.Template, opts.Slots, log)
	errs := []error{listErr}
	actions := make([]Action, 0, len(profiles))
	budget := bootConfigBudget
	for _, p := range profiles {
		a, err := reconcileOne(opts, p, multiplex && p.name != gwstate.DefaultProfile, &budget)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		actions = append(actions, a)
	}
	warn, err := appendBootLog(opts.Home, formatBootLog(opts.Now(), actions))
	for _, w := range []error{warn, err} {
		if w != nil {
			log.Warn("reconcile: "+w.Error(), "home", opts.Home)
		}
	}
	return actions, errors.Join(errs...)
}

// multiplexed reads whether the root gateway serves the named profiles.
func multiplexed(opts Options) bool {
	cfg, err := readConfig(opts.Home)
	if err != nil {
		opts.Logger.Warn("reconcile: "+err.Error()+": multiplex_profiles taken from "+EnvMultiplex+" alone", "profile", gwstate.DefaultProfile)
	}
	return Multiplex(opts.Env[EnvMultiplex], cfg)
}

// reconcileOne handles one profile: read, clean, publish. A multiplexed
// profile is registered down whatever its state says: the default gateway
// serves it, a second gateway would be another owner of its platforms.
// The profile's config.yaml is parsed out of budget (bootConfigBudget).
func reconcileOne(opts Options, p profile, multiplexed bool, budget *int) (Action, error) {
	a := Action{Profile: p.name, Prior: "none", Multiplexed: multiplexed, PriorExit: gwstate.PriorExit(p.dir)}
	in, err := readIntent(opts, p)
	switch {
	case errors.Is(err, gwstate.ErrMissing):
		// Never started (a fresh volume, a new profile): down, as
		// wanted, and nothing to warn about; the boot log says
		// prior_state=none.
	case err != nil:
		a.Warning = err.Error() + ": registered down"
	default:
		a.Prior, a.Start = in.State, in.State == gwstate.Running && !multiplexed
	}
	for _, err := range removeStale(p.dir) {
		opts.Logger.Warn("reconcile: "+err.Error(), "profile", p.name)
	}
	a.StopTimeout, a.Drain, err = slotStopTimeout(p.dir, opts.Env, budget)
	if err != nil {
		opts.Logger.Warn("reconcile: "+err.Error(), "profile", p.name)
	}
	err = PublishSlot(opts.Scandir, Slot{Template: opts.Template, Instance: p.name, Down: !a.Start, StopTimeout: a.StopTimeout})
	switch {
	case errors.Is(err, ErrExists):
		a.Warning = join(a.Warning, fmt.Sprintf("slot %s already exists: left as it is", gwstate.Slot(opts.Template, p.name)))
	case err != nil:
		return a, fmt.Errorf("reconcile profile %s: %w", p.name, err)
	}
	return a, nil
}

// readIntent reads the profile's desired state. When the gateway's own
// rewrite of gateway_state.json lost the desired_state hinit last wrote
// (gwstate.Resolve), hinit's record counts and is written back, so the file
// says it again for hermes' own readers.
func readIntent(opts Options, p profile) (gwstate.Intent, error) {
	path := filepath.Join(p.dir, gwstate.StateFileName)
	in, err := gwstate.ReadIntent(path)
	if err != nil || !in.Reverted {
		return in, err
	}
	opts.Logger.Warn("reconcile: the gateway's own rewrite of gateway_state.json lost desired_state "+in.State+
		": hinit's record counts and is written back", "profile", p.name)
	if err := gwstate.SetDesired(path, in.State, opts.Now()); err != nil {
		opts.Logger.Warn("reconcile: "+err.Error(), "profile", p.name)
	}
	return in, nil
}

// seed creates the root state file for HERMES_GATEWAY_BOOTSTRAP_STATE.
func seed(path string, log *slog.Logger) {
	created, err := gwstate.Seed(path)
	switch {
	case err != nil:
		log.Warn("reconcile: bootstrap state not seeded: "+err.Error(), "profile", gwstate.DefaultProfile)
	case created:
		log.Info("reconcile: seeded gateway_state running (HERMES_GATEWAY_BOOTSTRAP_STATE)", "file", path)
	}
}

// withDefaults checks opts and fills Now and Logger. Home is resolved once
// (symlinks in the configured path itself are the operator's, not
// planted ones); below it nothing is followed.
func (o Options) withDefaults() (Options, error) {
	if !filepath.IsAbs(o.Home) || !filepath.IsAbs(o.Scandir) {
		return o, fmt.Errorf("reconcile: home %q and scandir %q must be absolute paths", o.Home, o.Scandir)
	}
	if err := svcname.CheckTemplate(o.Template); err != nil {
		return o, fmt.Errorf("reconcile: %w: %w", ErrInvalid, err)
	}
	o.Home = string(gwstate.ResolveHome(o.Home))
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// join joins two warnings with "; ".
func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
