// Package gwstate reads and writes the two small files through which hinit
// and a hermes gateway agree on what the gateway should be doing (SPEC §1,
// §4): the profile's gateway_state.json, of which hinit owns only the
// desired_state and updated_at fields, and the planned-stop marker
// .gateway-planned-stop.json that tells a gateway a SIGTERM is a requested
// stop rather than the container going down.
//
// The files live in $HERMES_HOME, which belongs to the hermes user. Callers
// run these functions inside asuser.Do as that user; on top of that, every
// path is opened with asuser's helpers, so a symlink anywhere in it is
// refused, never followed.
package gwstate

import (
	"errors"
	"io"
	"time"
)

// Reasons a state file gives no desired state. Callers treat each as "down"
// and log one warning naming the file and the reason.
var (
	ErrMissing = errors.New("no such file")
	ErrSymlink = errors.New("symlink in the path, not followed")
	ErrCorrupt = errors.New("corrupt state file")
	ErrNoState = errors.New("neither desired_state nor gateway_state set")
	ErrBudget  = errors.New("not read: this boot's budget of state file reads is spent")
)

// ErrInvalid is returned by SetDesired for a desired state other than
// Running or Stopped.
var ErrInvalid = errors.New("invalid desired state")

// The two desired states hinit writes.
const (
	Running = "running"
	Stopped = "stopped"
)

// maxSize bounds how much of a state file is read: a real one is a few KiB,
// anything beyond this is treated as corrupt rather than read into memory.
const maxSize = 4 << 20

// A Budget is how many bytes of state files a caller may still read in all
// (the boot reconcile: every profile's). The hermes user may write each file
// up to its bound and hard-link one into every profile: a thousand profiles
// of three 4 MiB files held a boot, and PID 1's CPU, for minutes. A file
// that would take the budget below zero is not read (ErrBudget); nil is
// no budget.
type Budget struct{ Left int }

// take reads at most limit bytes of r, fewer when b has less left; it
// says whether the budget, not limit, stopped it, and charges b what it
// read.
func (b *Budget) take(r io.Reader, limit int) (data []byte, spent bool, err error) {
	if b != nil && b.Left < limit {
		limit, spent = b.Left, true
	}
	data, err = io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if b != nil {
		b.Left -= min(len(data), limit)
	}
	return data, spent && len(data) > limit, err
}

// Timestamp formats t the way hermes' gateway writes updated_at
// (Python's datetime.now(timezone.utc).isoformat()):
// 2026-05-21T06:18:05.123456+00:00.
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000-07:00")
}
