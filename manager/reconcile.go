package manager

import (
	"fmt"

	"hinit/config"
	"hinit/reconcile"
)

// Reconcile publishes a scandir slot per hermes profile from what
// gateway_state.json says (SPEC §5), with the image user's rights only; env
// is the container environment after the boot hooks. It runs once,
// before the services start.
func (m *Manager) Reconcile(env map[string]string) {
	rc := m.cfg.Reconcile
	if rc == nil {
		return
	}
	if m.scandir == "" {
		m.log.Error("reconcile skipped: no writable scandir")
		return
	}
	opts := reconcile.Options{Home: config.Expand(rc.Home, env), Scandir: m.scandir, Template: rc.Template,
		Bootstrap: env["HERMES_GATEWAY_BOOTSTRAP_STATE"], Logger: m.log}
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
	}
	m.log.Info(fmt.Sprintf("reconcile: %d profiles, %d gateways to start", len(actions), started), "home", opts.Home)
}
