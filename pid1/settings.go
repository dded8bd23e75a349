package pid1

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"hinit/config"
	"hinit/control"
)

// Defaults of the settings environment variables may override; the paths
// are the protocol's (package control), which hsvc reads too.
const (
	DefaultConfig          = control.DefaultConfig
	DefaultShutdownTimeout = 8 * time.Second
)

// settings is hinit's configuration file plus the environment overrides.
type settings struct {
	cfg             *config.Config
	runtimeDir      string
	scandir         string
	shutdownTimeout time.Duration
	// checkGrace: hsvc check fails for a gateway wanted up but failing for
	// longer (reconcile.check_grace, HINIT_GATEWAY_CHECK_GRACE); 0 = off.
	checkGrace time.Duration
	// bare: no hinit.yaml, and neither HINIT_RUNTIME_DIR nor HINIT_SCANDIR
	// asks for more (SPEC §7). hinit then does what tini does: no runtime
	// dir, environment dir, control socket or scandir watch, and it is
	// silent unless something is wrong.
	bare bool
	// waitMain: bare, and no HINIT_SHUTDOWN_TIMEOUT. A main that has its
	// shutdown signal is waited for as long as it takes, as tini waits:
	// the stop timeout that bounds it is docker's or the kubelet's, which
	// hinit cannot see (30 s by default under Kubernetes); its own 8 s
	// would cut a drain the operator gave more time. shutdownTimeout then
	// bounds only what main leaves behind, from main's exit.
	waitMain bool
}

// loadSettings reads HINIT_CONFIG (or the default path; a missing file
// means built-in defaults) and the HINIT_* overrides.
func loadSettings(getenv func(string) string) (*settings, error) {
	path := or(getenv(control.ConfigEnv), DefaultConfig)
	cfg, err := config.Load(path)
	missing := errors.Is(err, fs.ErrNotExist) && getenv(control.ConfigEnv) == ""
	if missing {
		cfg, err = config.Default(), nil
	}
	if err != nil {
		return nil, err
	}
	s := &settings{
		cfg:             cfg,
		runtimeDir:      control.RuntimeDir(getenv),
		scandir:         control.Scandir(getenv),
		shutdownTimeout: DefaultShutdownTimeout,
		bare:            missing && control.Bare(getenv),
	}
	if s.bare {
		s.runtimeDir, s.scandir = "", ""
	}
	if cfg.ShutdownTimeout > 0 {
		s.shutdownTimeout = cfg.ShutdownTimeout
	}
	if v := getenv("HINIT_SHUTDOWN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("HINIT_SHUTDOWN_TIMEOUT=%q: want a positive Go duration like 8s", v)
		}
		s.shutdownTimeout = d
	}
	s.waitMain = s.bare && getenv("HINIT_SHUTDOWN_TIMEOUT") == ""
	if cfg.Reconcile != nil {
		s.checkGrace = cfg.Reconcile.CheckGrace
	}
	if v := getenv("HINIT_GATEWAY_CHECK_GRACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("HINIT_GATEWAY_CHECK_GRACE=%q: want a Go duration like 5m, or 0 for off", v)
		}
		s.checkGrace = d
	}
	return s, nil
}

// nested is what a hinit that is not PID 1 runs with when another hinit
// owns its runtime dir (control.Answering): the bare mode, on the command
// it was given and routed as main's (main.default, wrap, always_wrap),
// leaving that hinit's runtime dir, scandir and services alone.
// s6-overlay's /init refuses to run when it is not PID 1; hinit runs the
// command as tini would, so that `tini -g -- /init [CMD]` (an old
// entrypoint kept in front of the image's) still runs hermes.
func (s *settings) nested() *settings {
	cfg := config.Default()
	cfg.Main.Default, cfg.Main.Wrap, cfg.Main.AlwaysWrap = s.cfg.Main.Default, s.cfg.Main.Wrap, s.cfg.Main.AlwaysWrap
	return &settings{cfg: cfg, shutdownTimeout: s.shutdownTimeout, bare: true}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
