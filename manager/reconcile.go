package manager

import (
	"fmt"
	"time"

	"hinit/config"
	"hinit/reconcile"
)

// Reconcile publishes a scandir slot per hermes profile from what
// gateway_state.json says (SPEC §5), with the image user's rights only; env
// is the container environment after the boot hooks, args the container's
// command: a dashboard-only container reconciles nothing. It runs once,
// before the services start.
func (m *Manager) Reconcile(env map[string]string, args []string) {
	rc := m.cfg.Reconcile
	if rc == nil {
		return
	}
	if reconcile.DashboardOnly(args) {
		m.log.Info("reconcile: skipped: the container's command is the dashboard, whose container runs no gateways")
		return
	}
	if m.scandir == "" {
		m.log.Error("reconcile skipped: no writable scandir")
		return
	}
	opts := reconcile.Options{Home: config.Expand(rc.Home, env), Scandir: m.scandir, Template: rc.Template,
		Slots: m.cfg.ServicesMax, Bootstrap: env["HERMES_GATEWAY_BOOTSTRAP_STATE"], Env: env, Logger: m.log}
	var actions []reconcile.Action
	err := m.asUser(func() error {
		var err error
		actions, err = reconcile.Run(opts)
		return err
	})
	if err != nil {
		m.log.Error(fmt.Sprintf("reconcile: %v; gateways are not brought back", err))
	}
	started := 0
	for _, a := range actions {
		if a.Start {
			started++
		}
		if a.Warning != "" {
			m.log.Warn("reconcile: "+a.Warning, "profile", a.Profile)
		}
		m.logSlot(a)
	}
	m.log.Info(fmt.Sprintf("reconcile: %d profiles, %d gateways to start", len(actions), started), "home", opts.Home)
}

// logSlot says what multiplexing (and its fold) and a profile's drain
// budget made of its slot, and warns when the container's shutdown would
// cut the drain short.
func (m *Manager) logSlot(a reconcile.Action) {
	switch {
	case a.Multiplexed && a.Folded:
		m.log.Info("reconcile: multiplex_profiles: served by the default gateway, registered down; its running intent is the default gateway's", "profile", a.Profile)
	case a.Multiplexed:
		m.log.Info("reconcile: multiplex_profiles: served by the default gateway, registered down", "profile", a.Profile)
	case a.Folded:
		m.log.Info("reconcile: multiplex_profiles: started, its own state notwithstanding, for the named profiles it serves that wanted running", "profile", a.Profile)
	}
	if a.Drain == 0 {
		return // hermes' default budget: nothing the operator asked for
	}
	m.log.Info("reconcile: stop timeout from the profile's drain", "profile", a.Profile, "stop_timeout", a.StopTimeout, "drain", a.Drain)
	// The drain the operator configured, with hermes' headroom, against
	// the container's own budget (the default cron drain is hermes' and
	// every container's: warned about, it would be warned about always).
	if need := a.Drain + reconcile.DrainMargin; need > m.shutdownTimeout {
		hinitBudget, dockerSecs := need+5*time.Second, int((need + 10*time.Second).Seconds())
		m.log.Warn(fmt.Sprintf("reconcile: the gateway may take %v to stop but the container's shutdown "+
			"timeout is %v: set HINIT_SHUTDOWN_TIMEOUT=%v and docker stop -t %d (compose stop_grace_period, "+
			"Kubernetes terminationGracePeriodSeconds)", need, m.shutdownTimeout, hinitBudget, dockerSecs),
			"profile", a.Profile)
	}
}
