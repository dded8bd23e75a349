package reconcile

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"hinit/supervise"
)

// Failing is a gateway that makes `hsvc check` fail: wanted up, but failing
// for longer than the grace.
type Failing struct {
	Name   string
	State  string        // backoff, failed or exited
	For    time.Duration // how long it has been failing
	Reason string
}

// String is the line hsvc check prints: "gateway-coder failed for 2m0s: gave up ...".
func (f Failing) String() string {
	return fmt.Sprintf("%s %s for %v: %s", f.Name, f.State, f.For.Round(time.Second), f.Reason)
}

// FailingGateways returns, sorted as given, the gateways in sts (those
// isGateway says are: the manager's rule) that are wanted up (hsvc start, or the boot reconcile, asked for them) but
// have been failing for longer than grace as of now: crash-looping in
// backoff, given up (failed), or ended by a failing exit that is not
// restarted (exited with a code other than 0, e.g. 78 for a fatal
// configuration). How long counts from Status.FailingSince, so the flips of
// a crash loop between backoff and starting do not reset it. A grace of 0
// or less turns the check off: nil.
func FailingGateways(sts []supervise.Status, isGateway func(supervise.Status) bool, now time.Time, grace time.Duration) []Failing {
	if grace <= 0 {
		return nil
	}
	var out []Failing
	for _, st := range sts {
		if !isGateway(st) || st.Want != supervise.WantUp || !failingState(st) {
			continue
		}
		since := st.FailingSince
		if since.IsZero() {
			since = st.Since
		}
		if d := now.Sub(since); d > grace {
			out = append(out, Failing{Name: st.Name, State: string(st.State), For: d, Reason: st.Reason})
		}
	}
	return out
}

// failingState reports whether st is a failure rather than a run or a stop.
func failingState(st supervise.Status) bool {
	switch st.State {
	case supervise.StateBackoff, supervise.StateFailed:
		return true
	case supervise.StateExited:
		return st.LastExit.Failed()
	}
	return false
}

// CheckGateways is FailingGateways as the error hsvc check reports: nil
// when none fails, else one line naming each failing gateway and why.
func CheckGateways(sts []supervise.Status, isGateway func(supervise.Status) bool, now time.Time, grace time.Duration) error {
	failing := FailingGateways(sts, isGateway, now, grace)
	if len(failing) == 0 {
		return nil
	}
	lines := make([]string, len(failing))
	for i, f := range failing {
		lines[i] = f.String()
	}
	return fmt.Errorf("%w: %s", ErrGatewayFailing, strings.Join(lines, "; "))
}

// ErrGatewayFailing is the error of CheckGateways.
var ErrGatewayFailing = errors.New("gateway failing")

// DashboardOnly reports whether the container's command (hinit's CMD, argv)
// is the dashboard alone: `dashboard ...` or `hermes dashboard ...`. Such a
// container shares the volume with a gateway container and must not
// reconcile or start gateways (hermes' container_boot skips it), or each
// profile would get two gateways. The s6 image's own entrypoint words in
// front of it count for nothing, as container_boot strips them: an
// entrypoint kept from that image (`/init /opt/hermes/docker/main-wrapper.sh`,
// entrypoint-dispatch.sh, whose /init is hinit now) gives hinit
// `main-wrapper.sh dashboard ...`.
func DashboardOnly(argv []string) bool {
	for _, s6 := range []string{"entrypoint-dispatch.sh", "main-wrapper.sh", "hermes"} {
		if len(argv) > 0 && baseName(argv[0]) == s6 {
			argv = argv[1:]
		}
	}
	return len(argv) > 0 && argv[0] == "dashboard"
}

func baseName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}
