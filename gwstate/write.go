package gwstate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"hinit/asuser"
	"hinit/internal/keylock"
)

// newFileMode is the mode of a state file or marker hinit creates. They
// hold PIDs and states, nothing secret, and must stay readable by whichever
// account runs the gateway.
const newFileMode os.FileMode = 0o644

// setting serializes SetDesired by file: hsvc requests on one gateway may
// come at once (a stop and a start from two shells). Another gateway's
// never waits: the hermes user, making its own file slow to merge (a
// large one rewritten in a loop), held root's records of every other
// gateway behind it, for minutes.
var setting keylock.Map

// maxWriteSize bounds the state file SetDesired reads and merges: a real
// one is a few KiB; each merge of a 4 MiB file of tiny keys took PID 1
// two seconds of CPU, and the hermes user may ask for one after another.
const maxWriteSize = 256 << 10

// SetDesired records that the gateway should be running or stopped, for
// `hsvc start/stop/restart`: it sets desired_state and updated_at
// (Timestamp(now)) and keeps every other member as it was (see object).
// The file is replaced atomically and keeps its mode; a missing file is
// created with just those two fields. A symlinked or corrupt file is left
// untouched and reported (ErrSymlink, ErrCorrupt). hinit's record
// (RecordName) is written after the file, so a later boot can tell a
// desired_state the gateway's own rewrite reverted.
//
// Calls on one file are serialized (setting): the file and the record of
// one call must not interleave with another's, or the record of the first
// written would be the last, and the next boot would take the file's
// desired_state for one the gateway reverted.
func SetDesired(path, desired string, now time.Time) error {
	if desired != Running && desired != Stopped {
		return fmt.Errorf("set desired state of %s: %w: %q", path, ErrInvalid, desired)
	}
	defer setting.Lock(path)()
	return setDesired(path, desired, now)
}

// setDesired is SetDesired, its lock held.
func setDesired(path, desired string, now time.Time) error {
	// The gateway rewrites the file whole whenever its state changes: one
	// of its writes that landed between the read and the rename would be
	// undone by the rename. So the file is checked to be the one read just
	// before the rename, and read and merged again when it is not; the
	// last merge is written whatever came meanwhile: a writer that beat
	// maxMerges of them rewrites the file every few milliseconds (a
	// heartbeat), and undoing one of its writes loses less than leaving
	// the wish unrecorded (hsvc stop reported "not recorded" against a
	// 2 ms heartbeat under a slow disk's fsyncs).
	for merges := 1; ; merges++ {
		replaced, err := mergeDesired(path, desired, now, merges < maxMerges)
		if errors.Is(err, asuser.ErrReplaced) {
			continue
		}
		if err != nil {
			return fmt.Errorf("set desired state: %w", err)
		}
		return writeRecord(path, record{DesiredState: desired, Replaced: replaced, WrittenAt: Timestamp(now)})
	}
}

// SettleAfter is how long after SetDesired its caller calls Settle: the
// gateway's rewrites that had read the file before hinit's write have
// landed by then (each is a read, a merge and a rename: milliseconds,
// under a second on a loaded machine).
const SettleAfter = 10 * time.Second

// Settle reads back the file that SetDesired(path, _, at) wrote, once its
// caller has waited SettleAfter. When the gateway's rewrite undid that
// write (Resolve), the desired state is written again, at now, and again
// is true: the caller settles that write in turn. Otherwise the record is
// marked settled, and no longer speaks at a boot (RecordName). A record a
// later write replaced is that write's to settle, and a corrupt or
// unreadable file leaves the record as it is, for the boot.
func Settle(path string, at, now time.Time) (again bool, err error) {
	defer setting.Lock(path)()
	data, r, err := unsettledRecord(path)
	if data == nil || r.WrittenAt != Timestamp(at) {
		return false, err
	}
	state, _, err := readFile(path, maxSize, nil)
	if errors.Is(err, ErrMissing) {
		forgetRecord(path)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	in, err := Resolve(state, data)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if in.Reverted {
		return true, setDesired(path, in.State, now)
	}
	r.Settled = true
	return false, writeRecord(path, r)
}

// SettleRecord marks hinit's record next to path settled, whatever write
// it records: at a boot, where no gateway runs and none of its rewrites is
// in flight, once the boot has read the file through it (and written a
// revert back). A record left unsettled (the container ended within
// SettleAfter of the write, or an older hinit wrote it) would otherwise
// speak at every later boot, after the gateway's own rewrites restamped a
// value the boot took for a later decision.
func SettleRecord(path string) error {
	defer setting.Lock(path)()
	data, r, err := unsettledRecord(path)
	if data == nil {
		return err
	}
	r.Settled = true
	return writeRecord(path, r)
}

// unsettledRecord reads hinit's record next to path; data is nil when
// there is none hinit could have written (readRecord, parseRecord) or it
// is settled already.
func unsettledRecord(path string) (data []byte, r record, err error) {
	data, ok, err := readRecord(path, nil)
	if err != nil || !ok {
		return nil, r, err
	}
	if r, ok = parseRecord(data); !ok || r.Settled {
		return nil, r, nil
	}
	return data, r, nil
}

// maxMerges bounds how many times SetDesired reads and merges into a file
// another writer keeps replacing; the last is written unchecked.
const maxMerges = 8

// mergeDesired is one read, merge and rename of SetDesired. It returns the
// desired state it replaced, or, with check, an error that wraps
// asuser.ErrReplaced when the file changed before the rename (and was left
// as it is).
func mergeDesired(path, desired string, now time.Time, check bool) (string, error) {
	data, read, err := readVersion(path, maxWriteSize, nil)
	mode := read.mode
	obj := &object{index: map[string]int{}}
	switch {
	case errors.Is(err, ErrMissing):
		mode = newFileMode
	case err != nil:
		return "", err
	default:
		if obj, err = parseObject(data); err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
	}
	replaced := obj.desired()
	if data, ok, _ := readRecord(path, nil); ok && replaced == desired {
		// The same wish again: what a revert in flight may still put
		// back is what the first of these writes replaced.
		if r, ok := parseRecord(data); ok && r.DesiredState == desired && !r.Settled {
			replaced = r.Replaced
		}
	}
	if err := obj.set("desired_state", desired); err != nil {
		return "", err
	}
	if err := obj.set("updated_at", Timestamp(now)); err != nil {
		return "", err
	}
	var same func(st *unix.Stat_t) bool
	if check {
		same = func(st *unix.Stat_t) bool { return versionOf(st) == read }
	}
	return replaced, asuser.WriteFileAtomicIf(path, obj.encode(), mode, same)
}

// Seed creates path holding {"gateway_state":"running"} when nothing is
// there (HERMES_GATEWAY_BOOTSTRAP_STATE=running: a fresh volume starts its
// root gateway). It reports whether it created the file. Whatever is already
// at path, a symlink included, is left alone: the file is written under a
// temporary name and link(2)ed into place, which fails rather than replace
// or follow anything.
func Seed(path string) (bool, error) {
	dir, base := filepath.Split(path)
	tmp := filepath.Join(dir, asuser.TempName(base+".seed"))
	f, err := asuser.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, newFileMode)
	if err != nil {
		return false, fmt.Errorf("seed %s: %w", path, err)
	}
	defer os.Remove(tmp)
	_, err = f.WriteString(`{"gateway_state":"running"}`)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path)
	}
	switch {
	case errors.Is(err, os.ErrExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("seed %s: %w", path, err)
	}
	forgetRecord(path)
	return true, nil
}
