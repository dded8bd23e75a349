package gwstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"hinit/asuser"
)

// RecordName is hinit's own record, next to gateway_state.json, of the
// desired state it last wrote there and the value that write replaced.
//
// hermes' gateway rewrites gateway_state.json whole, read-modify-write,
// without a lock (gateway/status.py write_runtime_status), every heartbeat
// and on each change of its state. A SetDesired that lands between one
// such read and its rename is lost: the file goes back to the value the
// gateway read (or, when the gateway found the file unreadable, to a fresh
// record without the field). The record lets ReadDesired see through that
// revert; nothing but hinit writes it.
//
// Such a revert lands within the gateway's read-modify-write, well under
// a second, so hinit reads the file back a while after each write
// (Settle): a revert found then is written over again, and a record whose
// value the file still held is marked settled. A settled record no longer
// speaks at a boot: a desired_state written since by anyone (another
// supervisor on the same volume, the s6 image the container went back to
// for a while) counts as it stands. Only a record hinit could not read
// back (the container ended within that while) is read through at a boot.
const RecordName = ".hinit-desired.json"

// maxRecord bounds the record read; hinit writes under 200 bytes.
const maxRecord = 4 << 10

// record is the content of RecordName.
type record struct {
	DesiredState string `json:"desired_state"`
	Replaced     string `json:"replaced"` // desired_state before hinit's write, "" when there was none
	WrittenAt    string `json:"written_at"`
	// Settled: read back after the gateway's rewrites in flight at
	// WrittenAt had landed, the file still held DesiredState (Settle).
	Settled bool `json:"settled,omitempty"`
}

// recordPath is the record next to the state file at statePath.
func recordPath(statePath string) string {
	return filepath.Join(filepath.Dir(statePath), RecordName)
}

// writeRecord replaces the record next to statePath.
func writeRecord(statePath string, r record) error {
	data, _ := json.Marshal(r)
	if err := asuser.WriteFileAtomic(recordPath(statePath), data, newFileMode); err != nil {
		return fmt.Errorf("write hinit's desired-state record: %w", err)
	}
	return nil
}

// forgetRecord removes the record next to statePath, whose state file is
// gone (or was just created where there was none): it describes a file
// that no longer exists, and would take the next one (hermes' first write,
// the bootstrap seed) for one the gateway reverted. It removes the entry,
// never what a symlink of that name points to.
func forgetRecord(statePath string) {
	_ = os.Remove(recordPath(statePath))
}

// readRecord reads the record next to statePath; ok is false when there is
// none that could be hinit's (missing, symlinked, oversized, malformed).
// err is ErrBudget when budget did not allow reading it: then whether
// there is one is not known.
func readRecord(statePath string, budget *Budget) (data []byte, ok bool, err error) {
	data, _, err = readFile(recordPath(statePath), maxRecord, budget)
	if errors.Is(err, ErrBudget) {
		return nil, false, err
	}
	return data, err == nil, nil
}

// parseRecord decodes a record; ok is false unless it holds a desired state
// hinit writes and a replaced value that looks like a state.
func parseRecord(data []byte) (record, bool) {
	var r record
	if len(data) == 0 || len(data) > maxRecord || json.Unmarshal(data, &r) != nil {
		return r, false
	}
	valid := (r.DesiredState == Running || r.DesiredState == Stopped) && (r.Replaced == "" || validState(r.Replaced))
	return r, valid
}

// Intent is the desired state of a gateway as ReadIntent resolved it.
type Intent struct {
	State string
	// Reverted: gateway_state.json lost hinit's last desired_state (it
	// holds the value that write replaced, or none) and State is hinit's
	// record. The caller may write State back with SetDesired.
	Reverted bool
}

// Resolve decides the desired state from the bytes of a gateway_state.json
// and of hinit's record (nil when there is none). The file's desired_state
// counts unless it is missing or equal to the value hinit's last write
// replaced while hinit wrote something else: that is the gateway's rewrite
// undoing hinit's, and the record's value counts, unless the record is
// settled (see RecordName). Otherwise, as ReadDesired: desired_state as it
// stands when present, else gateway_state with draining and degraded
// counted as running.
func Resolve(state, rec []byte) (Intent, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(state, &doc); err != nil || doc == nil {
		return Intent{}, fmt.Errorf("%w: not a JSON object", ErrCorrupt)
	}
	desired, present, err := stateField(doc, "desired_state")
	if err != nil {
		return Intent{}, err
	}
	// hermes' own desired_state writer (S6ServiceManager, the CLI of
	// compat s6-overlay) stamps updated_at as an epoch number; the
	// gateway's rewrite, the one that reverts, stamps an ISO string, as
	// hinit does. A number says the file's desired_state is hermes' later
	// decision, not a revert.
	var stamp any
	_ = json.Unmarshal(doc["updated_at"], &stamp)
	_, epoch := stamp.(float64) // not null, a string or missing
	byHermesCLI := desired != "" && epoch
	if r, ok := parseRecord(rec); ok && !r.Settled && !byHermesCLI && r.DesiredState != desired && (!present || desired == r.Replaced) {
		return Intent{State: r.DesiredState, Reverted: true}, nil
	}
	if present {
		return Intent{State: desired}, nil
	}
	fallback, _, err := stateField(doc, "gateway_state")
	switch {
	case err != nil:
		return Intent{}, err
	case fallback == "":
		return Intent{}, ErrNoState
	}
	return Intent{State: normalize(fallback)}, nil
}

// ReadIntent is ReadDesired with hinit's record taken into account and
// the revert reported (see Resolve), reading out of budget (nil: none).
func ReadIntent(path string, budget *Budget) (Intent, error) {
	data, _, err := readFile(path, maxSize, budget)
	if errors.Is(err, ErrMissing) {
		forgetRecord(path)
	}
	if err != nil {
		return Intent{}, err
	}
	rec, ok, err := readRecord(path, budget)
	if err != nil { // a record may say stopped where the file says running
		return Intent{}, err
	}
	if !ok {
		rec = nil
	}
	in, err := Resolve(data, rec)
	if err != nil {
		return Intent{}, fmt.Errorf("read %s: %w", path, err)
	}
	return in, nil
}
