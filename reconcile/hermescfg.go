package reconcile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"hinit/asuser"
	"hinit/config"
)

// What reconcile reads of hermes' own settings (hermes_cli/gateway.py,
// gateway/config.py): the container environment first, then a profile's
// config.yaml.
const (
	ConfigFile   = "config.yaml"
	EnvDrain     = "HERMES_RESTART_DRAIN_TIMEOUT"
	EnvCronDrain = "HERMES_CRON_DRAIN_TIMEOUT"
	EnvMultiplex = "GATEWAY_MULTIPLEX_PROFILES"
	configMax    = 1 << 20 // a config.yaml is a few KiB; beyond this it is not read
	// hermes' stop budget (gateway/restart.py): SYSTEMD_STOP_HEADROOM_S,
	// CRON_DRAIN_CLEANUP_RESERVE_S, SYSTEMD_TIMEOUT_STOP_SEC_FLOOR, and the
	// default of agent.cron_drain_timeout.
	DrainMargin        = 30 * time.Second
	CronCleanupReserve = 10 * time.Second
	StopFloor          = 60 * time.Second
	DefaultCronDrain   = 30 * time.Second
	maxDrainBudget     = time.Hour - DrainMargin // config.MaxRefStopTimeout with the margin
)

// hermesConfig is the part of a profile's config.yaml hinit reads: each
// value as YAML typed it (bool, int, float64, string), nil when absent or
// not a scalar.
type hermesConfig struct {
	MultiplexProfiles        any // multiplex_profiles
	GatewayMultiplexProfiles any // gateway.multiplex_profiles
	RestartDrainTimeout      any // agent.restart_drain_timeout
	CronDrainTimeout         any // agent.cron_drain_timeout
	// Standalone is gateway.standalone read as a flag (flag), as
	// hermes' profile_is_standalone reads it: a named profile the root
	// gateway does not serve, even when it multiplexes.
	Standalone bool
}

// parseConfig reads what it can of a config.yaml. It walks the parsed tree
// rather than decoding into a struct: yaml.v3 decoding a mapping into a
// struct compares every pair of its keys for duplicates and builds an error
// for each pair, and this file is the hermes user's to write (40 KB of one
// repeated key cost PID 1 14 s and 4 GB). As in hermes (PyYAML), the last
// of repeated keys wins.
//
// One config.yaml is parsed at a time (parsing): the tree of a file of
// configMax bytes takes about 100 MiB, and each hsvc register of a gateway
// reads its profile's, so 16 requests of the hermes user at once took PID
// 1 from 5 MB to 2.4 GB.
func parseConfig(data []byte) hermesConfig {
	if len(data) == 0 {
		return hermesConfig{}
	}
	parsing.Lock()
	defer parsing.Unlock()
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return hermesConfig{}
	}
	root := doc.Content[0]
	return hermesConfig{
		MultiplexProfiles:        scalar(member(root, "multiplex_profiles")),
		GatewayMultiplexProfiles: scalar(member(member(root, "gateway"), "multiplex_profiles")),
		RestartDrainTimeout:      scalar(member(member(root, "agent"), "restart_drain_timeout")),
		CronDrainTimeout:         scalar(member(member(root, "agent"), "cron_drain_timeout")),
		Standalone:               flag(scalar(member(member(root, "gateway"), "standalone"))),
	}
}

// parsing is held while a config.yaml is parsed (parseConfig).
var parsing sync.Mutex

// member is the value of key in the mapping n, nil when n is not a mapping
// or has no such key. As in PyYAML (hermes): the last of repeated keys
// wins, and a key of the mapping wins over one it merges in (<<: *anchor,
// or a list of them, the earlier winning). Each mapping is searched once
// (seen): merges of merges of one anchor, which the hermes user may write,
// cost no more than the file's size.
func member(n *yaml.Node, key string) *yaml.Node {
	return memberOf(n, key, map[*yaml.Node]bool{})
}

func memberOf(n *yaml.Node, key string, seen map[*yaml.Node]bool) *yaml.Node {
	n = config.Unalias(n)
	if n == nil || n.Kind != yaml.MappingNode || seen[n] {
		return nil
	}
	seen[n] = true
	var v *yaml.Node
	var groups [][]*yaml.Node // what each << merges in, in the file's order
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := config.Unalias(n.Content[i])
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
		case k.Value == key && k.ShortTag() != "!!merge":
			v = n.Content[i+1]
		case k.ShortTag() == "!!merge":
			group := []*yaml.Node{n.Content[i+1]}
			if m := config.Unalias(n.Content[i+1]); m != nil && m.Kind == yaml.SequenceNode {
				group = m.Content
			}
			groups = append(groups, group)
		}
	}
	// A later << wins over an earlier one (PyYAML), and within one list
	// the earlier mapping wins. (Each << put in front of the ones before
	// it, copying them, cost the square of their number: minutes of PID
	// 1's time for a 1 MiB config.yaml of "<<: *a" lines.)
	for i := len(groups) - 1; i >= 0 && v == nil; i-- {
		for _, m := range groups[i] {
			if v = memberOf(m, key, seen); v != nil {
				break
			}
		}
	}
	return v
}

// scalar is the value of a scalar node as YAML types it; nil when n is
// nil (absent), and for a present value that is no scalar (a list, a
// mapping) something that is neither bool, number nor string, so that it
// reads as set but unusable.
func scalar(n *yaml.Node) any {
	n = config.Unalias(n)
	if n == nil {
		return nil
	}
	var v any
	if n.Kind != yaml.ScalarNode {
		return notScalar{empty: len(n.Content) == 0}
	}
	if n.Decode(&v) != nil {
		return notScalar{}
	}
	return v
}

// notScalar is a value present in config.yaml that is not a scalar: an
// empty list or mapping when empty.
type notScalar struct{ empty bool }

// flag reads a value of config.yaml (as scalar gives it) as hermes reads
// its flags: a string as a word, on only when it is one of the on words
// (PyYAML has already made yes, no, on and off booleans, which yaml.v3
// leaves strings), anything else as Python's bool() reads it.
func flag(v any) bool {
	if s, ok := v.(string); ok {
		on, _ := word(s)
		return on
	}
	return pyBool(v)
}

// pyBool is Python's bool() of a value as scalar gives it: false for
// nothing, false, zero, "" and an empty list or mapping.
func pyBool(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case int64:
		return x != 0
	case uint64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case notScalar:
		return !x.empty
	}
	return true
}

// Multiplex is hermes' multiplex_profiles: env (GATEWAY_MULTIPLEX_PROFILES)
// when it holds a recognised word (1/true/yes/on, 0/false/no/off), else
// multiplex_profiles of the root config.yaml, top level or under gateway:,
// else off. A blank or unrecognised env value is unset (an empty secret
// must not shadow a config.yaml opt-in). In config.yaml the value is a
// flag: 1, [true] and "on" are on, 0, {} and "maybe" off.
func Multiplex(env string, rootConfig []byte) bool {
	if on, ok := word(env); ok {
		return on
	}
	c := parseConfig(rootConfig)
	v := c.MultiplexProfiles
	if v == nil {
		v = c.GatewayMultiplexProfiles
	}
	return flag(v)
}

// word reads a boolean word; ok is false for anything else.
func word(s string) (on, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

// DrainTimeout is hermes' restart_drain_timeout for one profile, as its
// gateway takes it: agent.restart_drain_timeout of the profile's
// config.yaml when set (hermes' gateway/run.py bridges config.yaml over the
// environment: "config.yaml unconditionally wins"), else env
// (HERMES_RESTART_DRAIN_TIMEOUT); seconds, 0 when absent, negative or not a
// number, at most just under an hour.
func DrainTimeout(env string, profileConfig []byte) time.Duration {
	return drainTimeout(env, parseConfig(profileConfig))
}

// drainTimeout is DrainTimeout of a parsed config.yaml.
func drainTimeout(env string, c hermesConfig) time.Duration {
	d, ok := seconds(env, c.RestartDrainTimeout)
	if !ok {
		return 0
	}
	return d
}

// cronDrain is hermes' cron_drain_timeout for one profile: how long its
// gateway's stop may first wait for cron work (agent.cron_drain_timeout of
// the profile's config.yaml when set, else HERMES_CRON_DRAIN_TIMEOUT, as
// DrainTimeout), and whether either set it. Neither, or not a number:
// hermes' default, 30 s; 0 opts out.
func cronDrain(env string, c hermesConfig) (d time.Duration, set bool) {
	d, ok := seconds(env, c.CronDrainTimeout)
	if !ok {
		return DefaultCronDrain, false
	}
	return d, true
}

// seconds reads a number of seconds from v (a config.yaml value) when it
// is set, else from env; ok is false when the one read holds no number.
// Negative is 0; at most just under an hour (past what a float holds too,
// as Python reads 1e400: inf).
func seconds(env string, v any) (d time.Duration, ok bool) {
	var raw string
	switch v := v.(type) {
	case nil:
		raw = strings.TrimSpace(env)
	case int:
		raw = strconv.Itoa(v)
	case float64:
		raw = strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		raw = strings.TrimSpace(v)
	}
	secs, err := strconv.ParseFloat(raw, 64)
	if errors.Is(err, strconv.ErrRange) {
		err = nil // ±Inf, or 0 for what is too small
	}
	switch {
	case err != nil || secs != secs: // not a number, NaN
		return 0, false
	case secs <= 0:
		return 0, true
	case secs >= maxDrainBudget.Seconds(): // also what would overflow a Duration, and +Inf
		return maxDrainBudget, true
	}
	return time.Duration(secs * float64(time.Second)), true
}

// StopTimeout is the stop timeout of a gateway whose stop may drain chat
// turns for drain and cron work for cron: hermes' own sizing of its
// supervisor's stop budget (resolve_systemd_timeout_stop_sec, its systemd
// unit's TimeoutStopSec): the longer of the drain and cron plus
// CronCleanupReserve, plus DrainMargin, at least StopFloor; 70 s with
// hermes' defaults. Shorter, a stop SIGKILLs a gateway still within its
// own budget, a cron job mid-write. It is a deadline: a gateway that stops
// at once is gone at once. At most config.MaxRefStopTimeout.
func StopTimeout(drain, cron time.Duration) time.Duration {
	budget := drain
	if cron > 0 {
		budget = max(budget, cron+CronCleanupReserve)
	}
	return min(max(StopFloor, budget+DrainMargin), config.MaxRefStopTimeout)
}

// SlotStopTimeout is the stop timeout of the gateway slot of the profile in
// profileDir, env being the environment the gateway will see: StopTimeout
// of its drain and cron drain (its config.yaml first, then the
// environment). asked is the drain someone configured, 0 when none: the
// restart drain, or a cron drain set (not hermes' default) with its
// CronCleanupReserve, the longer; what a container shutdown must leave
// time for. The boot reconcile and a run-time register both ask it. Call it
// with the image user's rights (it reads a hermes-owned file). When
// config.yaml cannot be read, err says so and the timeout comes from env
// alone.
func SlotStopTimeout(profileDir string, env map[string]string) (stop, asked time.Duration, err error) {
	return slotStopTimeout(profileDir, env, nil)
}

// bootConfigBudget is how many bytes of the profiles' config.yaml one boot
// reconcile parses in all. A parse costs about 0.3 s a MiB, one at a time,
// and the static services and main wait for the reconcile: 65 profiles of
// a 1 MiB config.yaml, which the hermes user may write, held the boot 19 s,
// and services_max of them would hold it many minutes. A config.yaml is a
// few KiB, so the budget is spent only by files made to spend it; a
// profile past it gets its drain budget from the environment alone, with a
// warning, until its gateway is registered again (hsvc register parses its
// own file). A variable for tests only.
var bootConfigBudget = 8 << 20

// slotStopTimeout is SlotStopTimeout taking what config.yaml it reads out
// of *budget; nil: no budget.
func slotStopTimeout(profileDir string, env map[string]string, budget *int) (stop, asked time.Duration, err error) {
	s, err := readSettings(profileDir, env, budget)
	return s.stop, s.asked, err
}

// profileSettings is what the boot reconcile takes from a profile's
// config.yaml: its slot's stop timeout and drain (SlotStopTimeout), and
// whether it is standalone (hermesConfig.Standalone).
type profileSettings struct {
	stop, asked time.Duration
	standalone  bool
	read        bool // config.yaml was read and parsed (or is absent): standalone is known
}

// readSettings reads profileDir's config.yaml once, out of *budget (nil:
// no budget). When it cannot be read, or is past the budget, err says so
// and the settings come from env alone.
func readSettings(profileDir string, env map[string]string, budget *int) (s profileSettings, err error) {
	limit := configMax
	if budget != nil {
		limit = min(limit, *budget) // a file past it is not even read whole
	}
	cfg, err := readConfig(profileDir, limit)
	if budget != nil && errors.Is(err, errTooLarge) && limit < configMax {
		err = fmt.Errorf("%s not parsed: this boot's %d KiB of config.yaml parses are spent", filepath.Join(profileDir, ConfigFile), bootConfigBudget>>10)
	} else if budget != nil {
		*budget -= len(cfg)
	}
	if err != nil {
		err = fmt.Errorf("%w: drain budget taken from %s and %s alone", err, EnvDrain, EnvCronDrain)
	}
	c := parseConfig(cfg) // once: a parse costs what the hermes user made the file
	drain := drainTimeout(env[EnvDrain], c)
	cron, set := cronDrain(env[EnvCronDrain], c)
	s.asked = drain
	if set && cron > 0 {
		s.asked = max(s.asked, cron+CronCleanupReserve)
	}
	s.stop, s.standalone, s.read = StopTimeout(drain, cron), c.Standalone, err == nil
	return s, err
}

// readConfig reads dir/config.yaml, of at most limit bytes (errTooLarge),
// without following a symlink anywhere in its path or blocking on a FIFO; a
// missing file is empty, anything else that cannot be read is an error
// naming the file.
func readConfig(dir string, limit int) ([]byte, error) {
	p := filepath.Join(dir, ConfigFile)
	f, err := asuser.OpenRegular(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case errors.Is(err, asuser.ErrNotRegular):
		return nil, fmt.Errorf("read %s: not a regular file", p)
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", p, err)
	case len(data) > limit:
		return nil, fmt.Errorf("read %s: %w than %d bytes", p, errTooLarge, limit)
	}
	return data, nil
}

// errTooLarge reports a config.yaml past the bytes readConfig may read.
var errTooLarge = errors.New("larger")
