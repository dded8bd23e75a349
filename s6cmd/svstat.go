package s6cmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"hinit/control"
	"hinit/s6dir"
	"hinit/signame"
)

const svstatSynopsis = "[ -uwNrpest | -o up,wantedup,normallyup,ready,paused,pid,exitcode,signal,signum,updownsince,readysince,updownfor,readyfor ] [ -n ] servicedir"

// svstatFlags maps s6-svstat's one-field flags to their -o field.
var svstatFlags = map[byte]string{'u': "up", 'w': "wantedup", 'N': "normallyup", 'r': "ready",
	'p': "pid", 'e': "exitcode", 's': "signal", 't': "updownfor"}

// runSvstat is s6-svstat: one line in s6's format, or the fields asked for.
func runSvstat(e *env, args []string) int {
	opts, rest, ok := getopt(args, "uwNrpestn", "o")
	if !ok || len(rest) != 1 {
		return e.usage(svstatSynopsis)
	}
	var fields []string
	numeric := false
	for _, o := range opts {
		switch o.c {
		case 'o':
			fields = strings.Split(o.val, ",")
		case 'n':
			numeric = true
		default:
			fields = []string{svstatFlags[o.c]}
		}
	}
	for _, f := range fields {
		if _, ok := svstatFields[f]; !ok {
			return e.usage(svstatSynopsis)
		}
	}
	dir := rest[0]
	st, err := e.status(dir)
	switch {
	case errors.Is(err, errNoSupervisor):
		return e.fatal(exitFalse, "unable to read status for %s: s6-supervise not running", dir)
	case errors.Is(err, errDenied):
		return e.fatal(exitSystem, "unable to check %s: %s", dir, errText(errDenied))
	case err != nil:
		return e.fatal(exitSystem, "unable to read status for %s: %v", dir, err)
	}
	v := view(st, dir, e.now())
	if fields == nil {
		fmt.Fprintln(e.stdout, v.line(numeric))
		return exitOK
	}
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = svstatFields[f](v)
	}
	fmt.Fprintln(e.stdout, strings.Join(out, " "))
	return exitOK
}

// svView is a service as s6 describes it.
type svView struct {
	up, wantUp, normallyUp, ready bool
	finished                      bool // down, and the finish program has ended
	pid                           int
	exitCode                      int // -1 when up or killed by a signal
	signum                        int // 0 unless killed by a signal
	upDownSince, readySince       time.Time
	now                           time.Time
}

// view translates hinit's status of the service of dir into s6's terms.
// normallyup and the readiness protocol are read from the dir itself, as
// s6-svstat does.
func view(st *control.Status, dir string, now time.Time) svView {
	v := svView{now: now, normallyUp: !fileExists(dir, s6dir.DownFile), wantUp: st.Want == "up", exitCode: -1}
	v.up = st.PID > 0 && !st.UpSince.IsZero()
	if v.up {
		v.pid, v.upDownSince = st.PID, st.UpSince
		v.ready = st.Ready && readyAsHinitSays(dir)
		v.readySince = st.Since
		return v
	}
	v.upDownSince = st.Since
	v.exitCode = 0
	if e := st.LastExit; e != nil {
		v.upDownSince = e.At
		if e.Signal != "" {
			v.exitCode = -1
			if n, err := signame.Parse(e.Signal); err == nil {
				v.signum = int(n)
			}
		} else {
			v.exitCode = e.Code
		}
	}
	// s6 counts a down service as not ready; its line still says since
	// when it is down for good (the finish program, if any, has ended).
	v.finished = st.State != "stopping"
	v.readySince = st.Since
	return v
}

// line is s6-svstat's default one-line format.
func (v svView) line(numeric bool) string {
	var b strings.Builder
	if v.up {
		fmt.Fprintf(&b, "up (pid %d) %d seconds", v.pid, secs(v.now, v.upDownSince))
	} else {
		switch {
		case v.signum != 0 && numeric:
			fmt.Fprintf(&b, "down (signal %d)", v.signum)
		case v.signum != 0:
			fmt.Fprintf(&b, "down (signal %s)", signame.Text(syscallSignal(v.signum)))
		default:
			fmt.Fprintf(&b, "down (exitcode %d)", v.exitCode)
		}
		fmt.Fprintf(&b, " %d seconds", secs(v.now, v.upDownSince))
	}
	switch {
	case v.up && !v.normallyUp:
		b.WriteString(", normally down")
	case !v.up && v.normallyUp:
		b.WriteString(", normally up")
	}
	switch {
	case v.up && !v.wantUp:
		b.WriteString(", want down")
	case !v.up && v.wantUp:
		b.WriteString(", want up")
	}
	if v.ready || !v.up && v.finished { // s6 prints it for every down service but a finishing one
		fmt.Fprintf(&b, ", ready %d seconds", secs(v.now, v.readySince))
	}
	return b.String()
}

// svstatFields renders each -o field.
var svstatFields = map[string]func(v svView) string{
	"up":         func(v svView) string { return strconv.FormatBool(v.up) },
	"wantedup":   func(v svView) string { return strconv.FormatBool(v.wantUp) },
	"normallyup": func(v svView) string { return strconv.FormatBool(v.normallyUp) },
	"ready":      func(v svView) string { return strconv.FormatBool(v.ready) },
	"paused":     func(svView) string { return "false" },
	"pid": func(v svView) string {
		if !v.up {
			return "-1"
		}
		return strconv.Itoa(v.pid)
	},
	"exitcode": func(v svView) string { return strconv.Itoa(v.exitCode) },
	"signal": func(v svView) string {
		if v.signum == 0 {
			return "NA"
		}
		return signame.Text(syscallSignal(v.signum))
	},
	"signum": func(v svView) string {
		if v.signum == 0 {
			return "-1"
		}
		return strconv.Itoa(v.signum)
	},
	"updownsince": func(v svView) string { return tai64n(v.upDownSince) },
	"readysince":  func(v svView) string { return tai64n(v.readySince) },
	"updownfor":   func(v svView) string { return strconv.FormatInt(secs(v.now, v.upDownSince), 10) },
	"readyfor":    func(v svView) string { return strconv.FormatInt(secs(v.now, v.readySince), 10) },
}

// secs is whole seconds from t to now, never negative.
func secs(now, t time.Time) int64 {
	if t.IsZero() || now.Before(t) {
		return 0
	}
	return int64(now.Sub(t) / time.Second)
}

// tai64n is t as an external TAI64N label, as skalibs writes it: TAI is
// UTC plus 10 s plus the 27 leap seconds since 1972.
func tai64n(t time.Time) string {
	return fmt.Sprintf("@%016x%08x", uint64(1)<<62+uint64(t.Unix()+37), t.Nanosecond())
}

func syscallSignal(n int) unix.Signal { return unix.Signal(n) }
