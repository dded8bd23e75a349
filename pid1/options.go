package pid1

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"

	"hinit/config"
	"hinit/signame"
)

// options are tini's flags and variables (SPEC §7), read the same way
// whether hinit runs as tini or as hinit. The zero value is hinit's
// default: nothing asked for.
type options struct {
	expect    [256]bool      // -e CODE: main's exit CODE becomes 0
	group     bool           // -g, TINI_KILL_PROCESS_GROUP: signals go to main's process group
	pdeath    syscall.Signal // -p SIG: hinit's parent-death signal, 0 for none
	subreaper bool           // -s, TINI_SUBREAPER: hinit is one anyway when not PID 1
	warnReap  bool           // -w: one warning per orphan reaped
	verbose   int            // -v, counted
	tiniLevel *int           // TINI_VERBOSITY, when set: tini's level, 1 by default
}

// action is what a command line asks for besides running main.
type action int

const (
	actRun action = iota
	actHelp
	actVersion
	actLicense
)

// errUsage is a command line hinit cannot run: one line, exit 2 (1 as
// tini, which is what tini itself exits with).
var errUsage = errors.New("usage")

// parseFlags reads tini's options from args and returns them with the
// command that follows. As tini the options are found the way tini's getopt
// finds them: anywhere before "--", unless POSIXLY_CORRECT is in the
// environment (empty counts, as for glibc), which ends them at the first
// word that is not one; as hinit they always end there, so that `hinit
// sleep -v 1` runs `sleep -v 1`. tini takes --version only alone.
func parseFlags(args []string, asTini bool, lookup func(string) (string, bool)) (*options, []string, action, error) {
	o := &options{}
	_, posix := lookup("POSIXLY_CORRECT")
	gnu := asTini && !posix
	var cmd []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return o, append(cmd, args[i+1:]...), actRun, nil
		case a == "--version" && asTini && len(args) > 1:
			return nil, nil, actRun, fmt.Errorf("%w: unknown option --version (tini takes it alone)", errUsage)
		case a == "--version":
			return o, nil, actVersion, nil
		case a == "--help":
			return o, nil, actHelp, nil
		case len(a) < 2 || a[0] != '-':
			if !gnu {
				return o, append(cmd, args[i:]...), actRun, nil
			}
			cmd = append(cmd, a)
			continue
		case strings.HasPrefix(a, "--"):
			return nil, nil, actRun, fmt.Errorf("%w: unknown option %s", errUsage, a)
		}
		act, used, err := o.cluster(a[1:], args[i+1:])
		if err != nil || act != actRun {
			return o, nil, act, err
		}
		i += used
	}
	return o, cmd, actRun, nil
}

// cluster reads one word of short options ("-gv", "-e143", "-e 143"),
// taking a value from next when the flag needs one; used says how many
// words of next it took.
func (o *options) cluster(flags string, next []string) (act action, used int, err error) {
	for j := 0; j < len(flags); j++ {
		c := flags[j]
		switch c {
		case 'h':
			return actHelp, 0, nil
		case 'l':
			return actLicense, 0, nil
		case 's':
			o.subreaper = true
		case 'v':
			o.verbose++
		case 'w':
			o.warnReap = true
		case 'g':
			o.group = true
		case 'e', 'p':
			val := flags[j+1:]
			if val == "" {
				if len(next) == 0 {
					return actRun, 0, fmt.Errorf("%w: option -%c needs a value", errUsage, c)
				}
				val, used = next[0], 1
			}
			return actRun, used, o.value(c, val)
		default:
			return actRun, 0, fmt.Errorf("%w: unknown option -%c", errUsage, c)
		}
	}
	return actRun, 0, nil
}

// value sets -e CODE (0..255) or -p SIGNAME (tini's names: SIGUSR1).
func (o *options) value(flag byte, val string) error {
	if flag == 'e' {
		n, rest := strtol(val) // as tini: " 7", "+7", "07", even "" (0)
		if rest != "" || n < 0 || n > 255 {
			return fmt.Errorf("%w: -e %s: want an exit code from 0 to 255", errUsage, val)
		}
		o.expect[n] = true
		return nil
	}
	s, err := signame.Parse(val)
	if err != nil || !strings.HasPrefix(val, "SIG") { // tini takes names only, SIG included
		return fmt.Errorf("%w: -p %s: want a signal name like SIGKILL or SIGUSR1", errUsage, val)
	}
	switch s {
	case syscall.SIGALRM: // it would be taken for the deadline, and the deadline for it
		return fmt.Errorf("%w: -p SIGALRM: hinit's shutdown deadline is its alarm; choose another signal", errUsage)
	case syscall.SIGPROF: // never delivered: the parent's death would go unseen
		return fmt.Errorf("%w: -p SIGPROF: the Go runtime keeps SIGPROF for itself; choose another signal", errUsage)
	}
	o.pdeath = s
	return nil
}

// readEnv adds tini's environment variables. As in tini, a variable that
// is set counts, whatever its value (TINI_SUBREAPER=0 too), and
// TINI_VERBOSITY replaces tini's level (which -v then no longer raises).
func (o *options) readEnv(lookup func(string) (string, bool)) {
	if _, ok := lookup("TINI_SUBREAPER"); ok {
		o.subreaper = true
	}
	if _, ok := lookup("TINI_KILL_PROCESS_GROUP"); ok {
		o.group = true
	}
	if v, ok := lookup("TINI_VERBOSITY"); ok {
		n, _ := strtol(v) // atoi, as tini: "3x" is 3, garbage 0
		if n < 0 {
			n = 3 // tini's level is unsigned: -1 is its highest
		}
		n = min(n, 3)
		o.tiniLevel = &n
	}
}

// strtol is C's strtol(s, &rest, 10), with which tini reads -e (and, as
// atoi, TINI_VERBOSITY): white space (isspace), an optional sign, decimal
// digits. With no digit nothing is read: 0, and rest is s. A value past
// 2^20 is 2^20 (as strtol's LONG_MAX, out of every range its callers take).
func strtol(s string) (n int, rest string) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := i < len(s) && s[i] == '-'
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := i
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		n = min(n*10+int(s[i]-'0'), 1<<20)
	}
	if i == digits {
		return 0, s
	}
	if neg {
		n = -n
	}
	return n, s[i:]
}

// logLevel is hinit's log level: HINIT_LOG_LEVEL when set; else tini's
// verbosity (TINI_VERBOSITY, or 1 plus one per -v) mapped onto slog's
// levels, 0 errors only, 1 warnings, 2 info, 3 and up debug. Without
// TINI_VERBOSITY a configured hinit starts from info and a bare one from
// warnings (silent unless something is wrong), and each -v is one step
// more.
func (o *options) logLevel(hinitLevel string, bare bool) (slog.Level, error) {
	if hinitLevel != "" {
		return parseLevel(hinitLevel)
	}
	tini := 1
	if !bare {
		tini = 2
	}
	if o.tiniLevel != nil {
		tini = *o.tiniLevel
	} else {
		tini += o.verbose
	}
	switch {
	case tini <= 0:
		return slog.LevelError, nil
	case tini == 1:
		return slog.LevelWarn, nil
	case tini == 2:
		return slog.LevelInfo, nil
	}
	return slog.LevelDebug, nil
}

// exitStatus is the container's status for main's status code: a code
// given with -e becomes 0, then main.remap_exit of hinit.yaml applies (a
// code in both: -e wins, the command line being the more specific).
func (o *options) exitStatus(m config.Main, code int) int {
	if code >= 0 && code < len(o.expect) && o.expect[code] {
		return 0
	}
	if to, ok := m.RemapExit[code]; ok {
		return to
	}
	return code
}

// signalTarget is where a signal for main goes: its pid, or with -g its
// process group (main always leads its own).
func (o *options) signalTarget(pid int) int {
	if o.group {
		return -pid
	}
	return pid
}
