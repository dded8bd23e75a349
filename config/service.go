package config

import (
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"hinit/launch"
)

// Defaults of every service, applied before its keys are decoded: a key that
// is present replaces the whole field, with these defaults for the subkeys
// it leaves out.
var (
	defaultBackoff = Backoff{Initial: 500 * time.Millisecond, Max: 60 * time.Second, ResetAfter: 10 * time.Second}
	defaultStop    = Stop{Signal: "TERM", Timeout: 10 * time.Second}
	defaultLog     = Log{MaxSize: 1 << 20, Keep: 10}
)

// MaxLogKeep is the most archives log.keep may ask for: hinit holds the
// names of the archives it keeps while it prunes, and the dir's owner (the
// hermes user for a scandir service) writes both the setting and the dir.
const MaxLogKeep = 1000

// MaxGiveUpRestarts is the most restarts give_up.restarts may allow within
// its window: hinit keeps the time of each restart within the window, and
// a scandir service's owner (the hermes user) writes both the setting and
// the crash loop (restarts: 1e12, within: 100 years kept every one).
const MaxGiveUpRestarts = 1000

// origin is where a service mapping is written; it decides which keys it may hold.
type origin int

const (
	fromStatic   origin = iota // an entry of services: in hinit.yaml
	fromTemplate               // the body of a template
	fromOverride               // an entry of a template's overrides:
	fromScandir                // a dynamic service.yaml
)

const (
	serviceKeys  = "command, user, workdir, env, enabled, restart, no_restart_exit_codes, restart_now_exit_codes, backoff, give_up, stop, ready, log, essential, signals"
	staticKeys   = serviceKeys + ", protected"
	templateKeys = serviceKeys + ", overrides"
)

// newService returns a service with every default applied.
func newService(name string, source Source, file string, line int) *Service {
	return &Service{
		Name: name, Source: source, File: file, Line: line,
		Restart: RestartAlways,
		Backoff: defaultBackoff,
		Stop:    defaultStop,
		Log:     defaultLog,
	}
}

// service decodes the keys of mapping n into s. A missing command is
// reported at node at, the line that names the service.
func (d *decoder) service(s *Service, n, at *yaml.Node, path string, o origin, keys string) {
	for _, e := range d.entries(n, path) {
		if !d.serviceKey(s, e, path, o) {
			d.unknown(e, path, keys)
		}
	}
	d.needCommand(s, n, at, path)
}

// needCommand reports a service mapping n without a command key.
func (d *decoder) needCommand(s *Service, n, at *yaml.Node, path string) {
	if s.Command != nil || !isNull(n) && Unalias(n).Kind != yaml.MappingNode {
		return
	}
	if lacks(n, "command") {
		d.at(at, path, "command is required (a list of arguments or a shell command string)")
	}
}

// lacks reports that mapping n has no key named key, nor a merge key that
// might have held it: a merge key is reported on its own (entries), and a
// missing key behind it would be the same problem said twice.
func lacks(n *yaml.Node, key string) bool {
	if hasKey(n, key) {
		return false
	}
	if n = Unalias(n); n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if Unalias(n.Content[i]).ShortTag() == "!!merge" {
				return false
			}
		}
	}
	return true
}

// hasKey reports whether mapping n holds key.
func hasKey(n *yaml.Node, key string) bool {
	n = Unalias(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := Unalias(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			return true
		}
	}
	return false
}

// serviceKey decodes one key of a service into s, replacing the whole field.
// It returns false for a key that is not a service key.
func (d *decoder) serviceKey(s *Service, e entry, path string, o origin) bool {
	p := join(path, e.key)
	switch e.key {
	case "command":
		s.Command = d.command(e.v, p)
	case "user":
		s.User = d.user(e.v, p)
	case "workdir":
		s.Workdir = d.absPath(e.v, p)
	case "env":
		s.Env = d.env(e.v, p)
	case "enabled":
		// Set but empty (enabled: "", enabled:, enabled: ~) is false, as
		// documented; only an enabled left out means enabled.
		if s.Enabled = d.str(e.v, p); s.Enabled == "" {
			s.Enabled = "false"
		}
	case "restart":
		s.Restart = d.oneOf(e.v, p, "a restart policy", RestartAlways, RestartOnFailure, RestartNever)
	case "no_restart_exit_codes":
		s.NoRestartExitCodes = d.exitCodes(e.v, p)
		d.disjointCodes(s, e.v, p)
	case "restart_now_exit_codes":
		s.RestartNowExitCodes = d.exitCodes(e.v, p)
		d.disjointCodes(s, e.v, p)
	case "backoff":
		s.Backoff = d.backoff(e.v, p)
	case "give_up":
		s.GiveUp = d.giveUp(e.v, p)
	case "stop":
		s.Stop = d.stop(e.v, p)
	case "ready":
		s.Ready = d.ready(e.v, p)
	case "log":
		s.Log = d.log(e.v, p)
	case "essential":
		d.boolTo(&s.Essential, e.v, p)
	case "signals":
		s.DefaultSignals = d.oneOf(e.v, p, "a signal state", SignalsInherited, SignalsDefault) == SignalsDefault
	case "protected":
		if o != fromStatic {
			d.at(e.k, p, "only static services (services: in hinit.yaml) may be protected")
			return true
		}
		d.boolTo(&s.Protected, e.v, p)
	default:
		return false
	}
	return true
}

func (d *decoder) backoff(n *yaml.Node, path string) Backoff {
	b := defaultBackoff
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		switch e.key {
		case "initial":
			d.durationTo(&b.Initial, e.v, p, false)
		case "max":
			d.durationTo(&b.Max, e.v, p, false)
		case "reset_after":
			d.durationTo(&b.ResetAfter, e.v, p, true)
		default:
			d.unknown(e, path, "initial, max, reset_after")
		}
	}
	if b.Max < b.Initial {
		d.at(n, path, "max %s is less than initial %s, expected max >= initial (max is %s unless set)", b.Max, b.Initial, defaultBackoff.Max)
	}
	return b
}

func (d *decoder) giveUp(n *yaml.Node, path string) GiveUp {
	var g GiveUp
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		switch e.key {
		case "restarts":
			d.intTo(&g.Restarts, e.v, p, 0)
			if g.Restarts > MaxGiveUpRestarts {
				d.at(e.v, p, "%d is too large, expected at most %d (shorten within to give up later)", g.Restarts, MaxGiveUpRestarts)
				g.Restarts = 0
			}
		case "within":
			d.durationTo(&g.Within, e.v, p, false)
		default:
			d.unknown(e, path, "restarts, within")
		}
	}
	if g.Restarts > 0 && g.Within == 0 && !hasKey(n, "within") {
		d.at(n, path, "within is required with restarts (e.g. {restarts: 10, within: 5m})")
	}
	return g
}

func (d *decoder) stop(n *yaml.Node, path string) Stop {
	st := defaultStop
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		switch e.key {
		case "signal":
			st.Signal = d.signal(e.v, p)
		case "timeout":
			d.durationTo(&st.Timeout, e.v, p, false)
		case "planned_stop_marker":
			st.PlannedStopMarker = d.absPath(e.v, p)
		default:
			d.unknown(e, path, "signal, timeout, planned_stop_marker")
		}
	}
	return st
}

func (d *decoder) ready(n *yaml.Node, path string) Ready {
	var r Ready
	entries := d.entries(n, path)
	for _, e := range entries {
		p := join(path, e.key)
		switch e.key {
		case "notify_fd":
			d.intTo(&r.NotifyFD, e.v, p, 3)
			if r.NotifyFD > launch.MaxFD {
				d.at(e.v, p, "%d is too large, expected at most %d", r.NotifyFD, launch.MaxFD)
			}
		case "tcp":
			var ok bool
			if r.TCP, ok = d.strOK(e.v, p); ok && !validHostPort(r.TCP) {
				d.at(e.v, p, "%s is not an address, expected host:port (e.g. 127.0.0.1:9119)", quote(r.TCP))
			}
		case "delay":
			d.durationTo(&r.Delay, e.v, p, true)
		default:
			d.unknown(e, path, "notify_fd, tcp, delay")
		}
	}
	if len(entries) > 1 {
		d.at(n, path, "set only one of notify_fd, tcp, delay")
	}
	return r
}

// validHostPort checks host:port, unless it holds ${VAR} or {instance} and
// can only be checked once expanded.
func validHostPort(s string) bool {
	if strings.ContainsAny(s, "${") {
		return true
	}
	_, _, err := SplitHostPort(s)
	return err == nil
}

func (d *decoder) log(n *yaml.Node, path string) Log {
	l := defaultLog
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		switch e.key {
		case "dir":
			l.Dir = d.absPath(e.v, p)
		case "max_size":
			d.sizeTo(&l.MaxSize, e.v, p)
		case "keep":
			d.intTo(&l.Keep, e.v, p, 0)
			if l.Keep > MaxLogKeep {
				d.at(e.v, p, "%d is too large, expected at most %d (raise max_size to keep more)", l.Keep, MaxLogKeep)
			}
		case "console":
			var on bool
			d.boolTo(&on, e.v, p)
			l.Console = &on
		default:
			d.unknown(e, path, "dir, max_size, keep, console")
		}
	}
	return l
}

// disjointCodes reports an exit code listed both in no_restart_exit_codes
// and restart_now_exit_codes: one exit cannot both end a service and
// restart it at once.
func (d *decoder) disjointCodes(s *Service, n *yaml.Node, path string) {
	for _, c := range s.RestartNowExitCodes {
		if slices.Contains(s.NoRestartExitCodes, c) {
			d.at(n, path, "exit code %d is in both no_restart_exit_codes and restart_now_exit_codes, expected one of them", c)
			return
		}
	}
}
