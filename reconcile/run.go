package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"hinit/gwstate"
	"hinit/svcname"
)

// Run reconciles every gateway slot with the desired state its profile
// recorded (SPEC §5), in this order: seed the root state file when
// Bootstrap is "running" and it is absent; for the root profile and each
// real named profile, read the desired state, remove stale PID files and
// publish the slot, up only when the state is "running"; then append one
// line per profile to the boot log.
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
	home := gwstate.Home(opts.Home) // resolved by withDefaults
	if strings.EqualFold(strings.TrimSpace(opts.Bootstrap), gwstate.Running) {
		seed(home.StateFile(gwstate.DefaultProfile), log)
	}
	profiles, listErr := listProfiles(home, opts.Template, log)
	errs := []error{listErr}
	actions := make([]Action, 0, len(profiles))
	for _, p := range profiles {
		a, err := reconcileOne(opts, p)
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

// reconcileOne handles one profile: read, clean, publish.
func reconcileOne(opts Options, p profile) (Action, error) {
	a := Action{Profile: p.name, Prior: "none"}
	state, err := gwstate.ReadDesired(filepath.Join(p.dir, gwstate.StateFileName))
	if err != nil {
		a.Warning = err.Error() + ": registered down"
	} else {
		a.Prior, a.Start = state, state == gwstate.Running
	}
	for _, err := range removeStale(p.dir) {
		opts.Logger.Warn("reconcile: "+err.Error(), "profile", p.name)
	}
	err = Publish(opts.Scandir, opts.Template, p.name, !a.Start, nil)
	switch {
	case errors.Is(err, ErrExists):
		a.Warning = join(a.Warning, fmt.Sprintf("slot %s already exists: left as it is", gwstate.Slot(opts.Template, p.name)))
	case err != nil:
		return a, fmt.Errorf("reconcile profile %s: %w", p.name, err)
	}
	return a, nil
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
