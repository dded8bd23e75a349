// Package config reads hinit's configuration: /etc/hinit/hinit.yaml and the
// service.yaml files of the scandir. It only parses and validates; it never
// starts anything. Every error names the file and line it comes from, so an
// operator can fix a broken file from one log line.
//
// Values that depend on the container environment (${VAR} in command, env,
// enabled, workdir, log.dir, ...) are kept as written here and expanded by
// Expand at each start of the service, against the environment of that start.
package config

import (
	"strings"
	"time"
)

// Source is where a service's definition comes from, as status shows it:
// "static", "scandir" or "template:<name>".
type Source string

// Sources that are not template instances.
const (
	SourceStatic  Source = "static"  // services: of hinit.yaml
	SourceScandir Source = "scandir" // a full definition in a scandir dir
)

// TemplateSource is the source of the instances of template name.
func TemplateSource(name string) Source { return Source(templatePrefix + name) }

const templatePrefix = "template:"

// Template is the template s is an instance of, or "".
func (s Source) Template() string {
	name, ok := strings.CutPrefix(string(s), templatePrefix)
	if !ok {
		return ""
	}
	return name
}

// Restart policies of a service.
const (
	RestartAlways    = "always"     // restart after every exit but no_restart_exit_codes
	RestartOnFailure = "on-failure" // restart after a non-zero exit or a signal
	RestartNever     = "never"      // never restart: the service ends "exited"
)

// Signal states a service's processes start with (signals:).
const (
	SignalsInherited = "inherited" // what hinit inherited, as main
	SignalsDefault   = "default"   // nothing ignored, nothing blocked
)

// Config is the whole of hinit.yaml.
type Config struct {
	File            string               // path the config was read from ("" for built-in defaults)
	DropIns         []string             // the hinit.d/*.yaml files merged in, in name order
	User            string               // the image's unprivileged account (default user, control group, reconcile identity)
	Main            Main                 // the main program
	Services        []*Service           // static services, in file order
	Templates       map[string]*Template // service templates by name
	Boot            []Hook               // boot hooks, in order
	Reconcile       *Reconcile           // nil: no boot reconciliation
	ServicesMax     int                  // most dynamic services in the scandir (default 1000)
	ShutdownTimeout time.Duration        // 0: not set in the file (HINIT_SHUTDOWN_TIMEOUT or 8s applies)
	Env             map[string]string    // extra variables for main, services and hooks
	Compat          string               // "" or CompatS6Overlay (SPEC §8)
}

// CompatS6Overlay is `compat: s6-overlay`: hinit stands in for s6-overlay's
// PID 1 and reads s6 servicedirs in the scandir (SPEC §8).
const CompatS6Overlay = "s6-overlay"

// S6 reports whether the configuration asks for s6-overlay compatibility.
func (c *Config) S6() bool { return c.Compat == CompatS6Overlay }

// Main describes how the container's CMD becomes the main program.
type Main struct {
	Default    []string    // argv when there is no CMD
	Wrap       []string    // prefix for a CMD whose first word is not an executable on PATH
	AlwaysWrap []string    // first words that are wrapped even when they are on PATH
	User       string      // user main runs as when hinit is root ("" = Config.User, or root when that is empty)
	RemapExit  map[int]int // rewrites of main's exit status, e.g. {143: 0}
	Env        map[string]string
	Workdir    string
}

// Service is one supervised program: a static entry of services:, a dynamic
// service.yaml, or a rendered template instance. String fields may hold
// ${VAR} references, expanded at each start.
type Service struct {
	Name               string
	Source             Source
	File               string // file the definition came from, for messages
	Line               int    // line of the definition in File
	Command            []string
	User               string // name or uid:gid; "" = Config.User
	Workdir            string
	Env                map[string]string
	Enabled            string // "" = enabled; otherwise expanded, falsy means registered but down
	Restart            string // RestartAlways, RestartOnFailure or RestartNever
	NoRestartExitCodes []int
	Backoff            Backoff
	GiveUp             GiveUp
	Stop               Stop
	Ready              Ready
	Log                Log
	Essential          bool
	Protected          bool
	// DefaultSignals starts each process with no signal ignored and none
	// blocked (signals: default) instead of the signal mask and ignored
	// signals hinit inherited (signals: inherited, the default).
	DefaultSignals bool

	// RestartNowExitCodes are exits that ask for a new process (hermes'
	// 75, EX_TEMPFAIL, after a graceful restart): restarted at once and
	// counted neither as a quick failure nor towards give_up.
	RestartNowExitCodes []int
	// Finish, when set, runs after every exit of the process (an s6
	// servicedir's finish script); nil for hinit's own services.
	Finish *Finish
	// Logger, when set, is a service of its own (an s6 servicedir's
	// log/run) whose stdin reads this service's stdout through a pipe
	// hinit holds for both; nil for hinit's own services.
	Logger *Service
}

// FinishStayDown is the exit code of a finish program that keeps the
// service down instead of restarting it (s6's rule).
const FinishStayDown = 125

// Finish is a program run after each exit of a service's process, with
// s6's three arguments appended: the exit code (256 when killed by a
// signal), the signal number (0 when it exited) and the service's name. It
// runs as the service's user in its workdir, and is killed after Timeout.
type Finish struct {
	Command []string
	Timeout time.Duration
}

// Backoff spaces restarts of a service that keeps failing quickly.
// A run that lasted at least ResetAfter restarts at once; each consecutive
// quick failure waits Initial, then twice as long, up to Max.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	ResetAfter time.Duration
}

// GiveUp puts a service in state "failed" after Restarts restarts within
// Within. Restarts == 0 means never give up.
type GiveUp struct {
	Restarts int
	Within   time.Duration
}

// Stop says how a service is asked to stop: Signal, then after Timeout,
// SIGKILL to its whole process group. PlannedStopMarker, when set, is the
// path of the gateway's planned-stop marker written before a requested stop.
type Stop struct {
	Signal            string // signal name without SIG, e.g. "TERM"
	Timeout           time.Duration
	PlannedStopMarker string
}

// Ready says when a started service counts as ready ("up"). All zero: ready
// when spawned.
type Ready struct {
	NotifyFD int           // the service writes a newline to this fd when ready
	TCP      string        // host:port that accepts a connection when ready
	Delay    time.Duration // ready after this long
}

// Log says where the service's stdout and stderr go.
type Log struct {
	Dir     string // "" = no log file
	MaxSize int64  // rotate current at this size (bytes)
	Keep    int    // archives kept
	Console *bool  // copy lines to the container's stdout as "[name] line"; nil = true
}

// ConsoleOn reports whether lines are copied to the container's stdout.
func (l Log) ConsoleOn() bool { return l.Console == nil || *l.Console }

// Template is a family of services named <template>-<instance>. Instances
// are rendered by Render from the root-owned configuration, so a dynamic
// service.yaml that names a template can only run what the image allows.
type Template struct {
	Name string
	File string
	Line int
	// body is the template decoded and validated once at parse time, with
	// {instance} still in its strings; overrides holds, per instance, body
	// with that instance's overrides already applied. Render only copies one
	// of them and substitutes {instance}, so a start costs no YAML work.
	body      *Service
	overrides map[string]*Service
}

// Hook is one boot hook: run as root, in order, under Timeout.
type Hook struct {
	Name      string
	Command   []string
	Timeout   time.Duration
	OnFailure string // "stop" (default) or "continue"
	File      string // file the hook is defined in, for messages
	Line      int    // line of the hook in File
}

// Reconcile configures boot reconciliation of gateways (SPEC §5).
type Reconcile struct {
	Home     string // HERMES_HOME, may hold ${VAR}
	Template string // template whose instances are the gateways
	// CheckGrace, when above 0, makes `hsvc check` fail for a gateway that
	// is wanted up but has been failing (backoff, failed, exited with an
	// error) for longer than this. 0: gateways do not affect the check.
	CheckGrace time.Duration
}

// Ref is what a dynamic service.yaml may hold instead of a full service:
// the name of a template, the instance, extra environment and a longer
// stop timeout.
type Ref struct {
	Template string
	Instance string
	Env      map[string]string
	// StopTimeout, when above the template's stop timeout, replaces it
	// (a gateway's drain budget, hermes' restart_drain_timeout plus a
	// margin). At most MaxRefStopTimeout.
	StopTimeout time.Duration
	// Line is where template: is in the file the reference was read from
	// (0: not read from a file), for a message about it.
	Line int
}

// MaxRefStopTimeout bounds the stop timeout a template reference may ask
// for: a definition in the scandir cannot hold a stop up for longer.
const MaxRefStopTimeout = time.Hour
