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
// real named profile, read the desired state and remove stale PID files;
// decide which slots start (decide); publish each slot, with the profile's
// drain budget as its stop timeout (DrainTimeout); then append one line
// per profile to the boot log, and one for each symlinked profile dir
// skipped.
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
	profiles, links, listErr := listProfiles(home, opts.Template, opts.Slots, log)
	errs := []error{listErr}
	actions := make([]Action, len(profiles))
	reads := make([]profileRead, len(profiles))
	budget := bootBudget{config: bootConfigBudget, state: gwstate.Budget{Left: bootStateBudget}}
	for i, p := range profiles {
		actions[i], reads[i] = readOne(opts, p, &budget)
	}
	decide(actions, reads, multiplexed(opts))
	published := make([]Action, 0, len(profiles))
	for i, p := range profiles {
		if err := publishOne(opts, p, &actions[i]); err != nil {
			errs = append(errs, err)
			continue
		}
		published = append(published, actions[i])
	}
	warn, err := appendBootLog(opts.Home, formatBootLog(opts.Now(), published, links))
	for _, w := range []error{warn, err} {
		if w != nil {
			log.Warn("reconcile: "+w.Error(), "home", opts.Home)
		}
	}
	return published, errors.Join(errs...)
}

// multiplexed reads whether the root gateway serves the named profiles.
func multiplexed(opts Options) bool {
	cfg, err := readConfig(opts.Home, configMax)
	if err != nil {
		opts.Logger.Warn("reconcile: "+err.Error()+": multiplex_profiles taken from "+EnvMultiplex+" alone", "profile", gwstate.DefaultProfile)
	}
	return Multiplex(opts.Env[EnvMultiplex], cfg)
}

// profileRead is what readOne learnt of a profile beside its Action.
type profileRead struct {
	standalone bool   // a named profile whose config.yaml says gateway.standalone
	unknown    bool   // its config.yaml was not read: standalone is not known
	stateErr   string // why its desired state could not be read; "" when it could, or there was none
}

// decide sets which slots start, and the warnings that say why one does
// not start as its state says. A profile starts when its desired state is
// running. When the root gateway multiplexes, a named profile is served by
// it, not by a gateway of its own (a second owner of its platforms): its
// slot is registered down whatever its state says, and its running intent
// moves to the root slot, which starts for it (hermes' fold: without it, a
// container only ever driven as `hermes -p coder gateway start` came back
// with no gateway at all). A named profile that says gateway.standalone is
// not served by the root and keeps its own slot; one whose config.yaml
// could not be read is taken as not standalone, with a warning.
func decide(actions []Action, reads []profileRead, multiplex bool) {
	root, folded := -1, false
	for i := range actions {
		a, r := &actions[i], reads[i]
		if a.Profile == gwstate.DefaultProfile {
			root = i
			continue
		}
		a.Multiplexed = multiplex && !r.standalone
		if a.Multiplexed && r.unknown {
			a.Warning = join(a.Warning, "gateway.standalone not known: taken as not standalone, served by the default gateway")
		}
		if a.Multiplexed && a.Start {
			a.Start, a.Folded, folded = false, true, true
		}
	}
	if root >= 0 && folded && !actions[root].Start {
		actions[root].Start, actions[root].Folded = true, true
	}
	for i := range actions {
		a := &actions[i]
		switch {
		case reads[i].stateErr == "":
		case a.Start:
			a.Warning = join(a.Warning, reads[i].stateErr+": started all the same, for the named profiles it serves")
		default:
			a.Warning = join(a.Warning, reads[i].stateErr+": registered down")
		}
	}
}

// bootBudget is what one boot reconcile reads of the hermes user's files
// in all: bytes of config.yaml parsed (bootConfigBudget) and of state files
// read (bootStateBudget).
type bootBudget struct {
	config int
	state  gwstate.Budget
}

// bootStateBudget is how many bytes of the profiles' state files
// (gateway_state.json, hinit's record beside it, the lifecycle sentinel)
// one boot reconcile reads in all. Each is a few hundred bytes to a few
// KiB, so services_max profiles of real ones take a few MiB; the hermes
// user may make each as large as its bound and hard-link one into every
// profile, which held a boot for minutes. A profile past the budget is
// registered down, with a warning naming its file. A variable for tests
// only.
var bootStateBudget = 16 << 20

// readOne reads one profile: its desired state (Start when it is
// running), its slot's stop timeout and whether it is standalone, out of
// the boot's budget; and removes its stale PID files.
func readOne(opts Options, p profile, budget *bootBudget) (a Action, r profileRead) {
	a = Action{Profile: p.name, Prior: "none", PriorExit: gwstate.PriorExit(p.dir, &budget.state)}
	in, err := readIntent(opts, p, &budget.state)
	switch {
	case errors.Is(err, gwstate.ErrMissing):
		// Never started (a fresh volume, a new profile): down, as
		// wanted, and nothing to warn about; the boot log says
		// prior_state=none.
	case err != nil:
		r.stateErr = err.Error()
	default:
		a.Prior, a.Start = in.State, in.State == gwstate.Running
	}
	for _, err := range removeStale(p.dir) {
		opts.Logger.Warn("reconcile: "+err.Error(), "profile", p.name)
	}
	s, err := readSettings(p.dir, opts.Env, &budget.config)
	if err != nil {
		opts.Logger.Warn("reconcile: "+err.Error(), "profile", p.name)
	}
	a.StopTimeout, a.Drain = s.stop, s.asked
	if p.name != gwstate.DefaultProfile {
		r.standalone, r.unknown = s.standalone, !s.read
	}
	return a, r
}

// publishOne publishes the slot a says.
func publishOne(opts Options, p profile, a *Action) error {
	err := PublishSlot(opts.Scandir, Slot{Template: opts.Template, Instance: p.name, Down: !a.Start, StopTimeout: a.StopTimeout})
	switch {
	case errors.Is(err, ErrExists):
		a.Warning = join(a.Warning, fmt.Sprintf("slot %s already exists: left as it is", gwstate.Slot(opts.Template, p.name)))
	case err != nil:
		return fmt.Errorf("reconcile profile %s: %w", p.name, err)
	}
	return nil
}

// readIntent reads the profile's desired state. When the gateway's own
// rewrite of gateway_state.json lost the desired_state hinit last wrote
// (gwstate.Resolve), hinit's record counts and is written back, so the file
// says it again for hermes' own readers. Either way hinit's record is then
// settled: no gateway runs at a boot, so none of its rewrites is in flight,
// and what the file says from now on is a later decision.
func readIntent(opts Options, p profile, budget *gwstate.Budget) (gwstate.Intent, error) {
	path := filepath.Join(p.dir, gwstate.StateFileName)
	in, err := gwstate.ReadIntent(path, budget)
	if err != nil {
		return in, err
	}
	if in.Reverted {
		opts.Logger.Warn("reconcile: the gateway's own rewrite of gateway_state.json lost desired_state "+in.State+
			": hinit's record counts and is written back", "profile", p.name)
		if err := gwstate.SetDesired(path, in.State, opts.Now()); err != nil {
			opts.Logger.Warn("reconcile: "+err.Error(), "profile", p.name)
			return in, nil // the record still says it, for the next boot
		}
	}
	if err := gwstate.SettleRecord(path); err != nil {
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
