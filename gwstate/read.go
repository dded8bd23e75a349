package gwstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"hinit/asuser"
)

// ReadDesired returns the state the gateway should be in after a boot:
// desired_state when present (as it stands, "" included: hermes'
// container_boot starts a gateway only for "running"), else gateway_state,
// with the transient running states draining and degraded counted as
// running; hinit's own record
// (RecordName) wins over a desired_state the gateway's rewrite reverted
// (Resolve). A missing, symlinked, unreadable or corrupt file, or one with
// neither field, is an error that says which (ErrMissing, ErrSymlink,
// ErrCorrupt, ErrNoState, or the system's error for an unreadable one).
//
// A state must look like one: lowercase letters, digits, '_' and '-', at
// most 64 bytes; anything else is ErrCorrupt, so the value is safe to log.
func ReadDesired(path string) (string, error) {
	in, err := ReadIntent(path, nil)
	return in.State, err
}

// stateField returns doc[key] as a state, and whether it is there: absent
// and null are not (hermes' data.get is None), an empty string is.
func stateField(doc map[string]json.RawMessage, key string) (state string, present bool, err error) {
	raw, ok := doc[key]
	if !ok {
		return "", false, nil
	}
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, fmt.Errorf("%w: %s is not a string", ErrCorrupt, key)
	}
	if s == nil {
		return "", false, nil
	}
	if *s != "" && !validState(*s) {
		return "", false, fmt.Errorf("%w: %s is not a state name", ErrCorrupt, key)
	}
	return *s, true, nil
}

// normalize maps the transient states of a running gateway to running.
func normalize(state string) string {
	switch state {
	case "draining", "degraded":
		return Running
	}
	return state
}

// validState reports whether s looks like a state name.
func validState(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// readFile reads a state file of at most limit bytes, out of budget (nil:
// none), without following a symlink anywhere in its path and without
// blocking on a FIFO. It returns the content, without the UTF-8 byte order
// mark a Windows editor puts first (hermes reads every state file as
// utf-8-sig), and the file's permission bits; errors wrap ErrMissing,
// ErrSymlink, ErrCorrupt or ErrBudget.
func readFile(path string, limit int, budget *Budget) ([]byte, os.FileMode, error) {
	data, v, err := readVersion(path, limit, budget)
	return data, v.mode, err
}

// version tells one content of a file from another written over it, by a
// rename or in place; a missing file's is the zero version.
type version struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
	mode         os.FileMode // permission bits only
}

// versionOf is the version of the file st describes (nil: none there).
func versionOf(st *unix.Stat_t) version {
	if st == nil {
		return version{}
	}
	return version{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim, mode: os.FileMode(st.Mode & 0o777)}
}

// readVersion is readFile that also returns the version of what it read.
func readVersion(path string, limit int, budget *Budget) ([]byte, version, error) {
	f, err := asuser.OpenRegular(path)
	switch {
	case errors.Is(err, asuser.ErrSymlink):
		return nil, version{}, fmt.Errorf("read %s: %w", path, ErrSymlink)
	case errors.Is(err, os.ErrNotExist):
		return nil, version{}, fmt.Errorf("read %s: %w", path, ErrMissing)
	case errors.Is(err, asuser.ErrNotRegular):
		return nil, version{}, fmt.Errorf("read %s: %w: not a regular file", path, ErrCorrupt)
	case err != nil:
		return nil, version{}, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, version{}, fmt.Errorf("read %s: %w", path, err)
	}
	data, spent, err := budget.take(f, limit)
	switch {
	case err != nil:
		return nil, version{}, fmt.Errorf("read %s: %w", path, err)
	case spent:
		return nil, version{}, fmt.Errorf("%s %w", path, ErrBudget)
	case len(data) > limit:
		return nil, version{}, fmt.Errorf("read %s: %w: larger than %d bytes", path, ErrCorrupt, limit)
	}
	return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), versionOf(&st), nil
}
