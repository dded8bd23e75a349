// Package scandir watches hinit's scandir (/run/service) and reports which
// dynamic services it asks for. It only watches and reads; it starts nothing.
// The supervisor consumes its Events and decides what to run.
//
// The layout it reads, part of hinit's interface:
//
//	<scandir>/<name>/service.yaml  the definition; a dir is reported once this exists
//	<scandir>/<name>/down          registered but not started
//	<scandir>/<name>/run           with Watcher.S6 and no service.yaml: an s6
//	                               servicedir, read by package s6dir; every
//	                               name in it and in its log/ is watched, but
//	                               supervise/, event/ and dot names; its trust
//	                               verdict counts the scandir's owner
//	<scandir>/.<anything>          ignored: writers build a dir here, then rename it into place
//
// # Design: level-triggered, per-name deltas
//
// An inotify event means nothing by itself; it only marks a name dirty. After
// each batch (everything already queued, taken at once, never waiting for
// more), every dirty name is read again from disk and compared with what was
// last reported for it, and only differences are sent: one Event per name
// whose state changed. A queue overflow (IN_Q_OVERFLOW) and the slow safety
// rescan mark every name dirty and converge by the same path, so the consumer
// has no special case to get right: applying each Event to a map (Entry set →
// store it, otherwise → delete) always leaves that map equal to the scandir as
// of the last batch. Work is proportional to what changed, not to the number of
// services; a rescan re-reads every service.yaml (at most MaxYAMLSize each)
// but still sends only differences.
//
// Limits. More than max service dirs: the dirs already accepted stay accepted
// while they exist; free slots go to waiting names in sorted order; the rest
// are refused (Event.Refused), logged once per name. Entries ignored (not a
// service dir, or a name the name rule refuses) are reported too
// (Event.Ignored), at most max of them; the rest are counted in the log. An idle Watcher does not
// wake up, except for the optional safety rescan (Watcher.SafetyRescan).
//
// It uses golang.org/x/sys/unix inotify directly rather than fsnotify: fsnotify
// v1.10 does not export IN_CLOSE_WRITE (so a half-written service.yaml would
// be read on IN_MODIFY), cannot set IN_DONT_FOLLOW/IN_ONLYDIR (so a dir swapped
// for a symlink could be watched through the link), and reports overflows on a
// channel separate from the events.
package scandir

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"hinit/s6dir"
	"hinit/trust"
)

// MaxYAMLSize is the largest service.yaml read. A bigger one is reported with
// ErrTooLarge instead of being read: a definition is a few hundred bytes, and
// anyone who can write to the scandir must not be able to make PID 1 load
// gigabytes.
const MaxYAMLSize = 64 << 10

// DefaultSafetyRescan is how often New's Watcher rescans the whole scandir in
// case an event was ever missed. It is the only timer of an idle Watcher.
const DefaultSafetyRescan = 5 * time.Minute

// DefaultOverflowGap is the least time New's Watcher leaves between a
// rescan and an overflow's (Watcher.OverflowGap).
const DefaultOverflowGap = time.Second

var (
	// ErrTooLarge is set in Entry.Err when service.yaml exceeds MaxYAMLSize.
	ErrTooLarge = errors.New("scandir: service.yaml larger than 64 KiB")
	// ErrNotRegular is set in Entry.Err when service.yaml is a symlink, a
	// FIFO, a dir or anything but a regular file. It is never followed.
	ErrNotRegular = errors.New("scandir: service.yaml is not a regular file")
	// ErrLinked is set in Entry.Err when service.yaml has other hard
	// links and another owner than its dir: it may be a file root may
	// read and the dir's owner may not, and a parse error quotes what it
	// read. It is not read.
	ErrLinked = errors.New("scandir: service.yaml has other hard links and another owner than its dir")
	// ErrScandirGone is returned by Run when the scandir itself is deleted
	// or moved: nothing more can be watched.
	ErrScandirGone = errors.New("scandir: scandir was removed or moved")
)

// Entry is one dynamic service as found on disk. Its fields are read-only for
// the consumer.
type Entry struct {
	Name string
	Dir  string // <scandir>/<name>
	// UID and GID own the dir itself (never a link's target), for display;
	// who the definition may run as is Trust's to say.
	UID, GID int
	// Trust is the trust rule's verdict over the dir and service.yaml as
	// read (package trust). When it refuses, Err holds the reason too.
	Trust trust.Verdict
	Down  bool // a file named down exists beside service.yaml (or run)
	// S6 is set for an s6 servicedir (a dir with an executable run and no
	// service.yaml) when the Watcher reads them (Watcher.S6).
	S6      *s6dir.Dir
	YAML    []byte    // content of service.yaml; nil when Err is set
	ModTime time.Time // of service.yaml
	// Err says why service.yaml could not be read (ErrTooLarge,
	// ErrNotRegular, ErrLinked, an I/O error), why an s6 dir's files could not (a
	// bad notification-fd...), or why the trust rule refused, for the
	// supervisor to show in status as it is: its text names the file at
	// fault, and is at most errcap.Max bytes.
	Err error

	// sum is a maphash of YAML under the Watcher's seed: what its book
	// compares once YAML is dropped. It need not be cryptographic: a
	// collision would only hide an edit of a dir from its own writer, the
	// hermes user, who gains nothing by it (it writes only its own dirs, and
	// same still compares owner, trust and mtime, so no change of who may run
	// it goes unseen); and the seed, random per Watcher and never shown, makes
	// crafting one impractical anyway. crypto/sha256 would pull the FIPS
	// module (~145 KB of hinit) into PID 1 for this one use.
	sum     uint64
	dropped bool // YAML dropped by the Watcher's book; read the dir again for it
	// dev and ino are the dir's identity, for Current: a dir removed and
	// made again under the same name is another dir. On tmpfs (where the
	// image keeps the scandir) an inode number is never reused; a disk
	// file system may give a dir made again at once its predecessor's, and
	// it is then taken for it: an event read from the old dir is applied
	// as the new one's, and if their contents differ the new one's own
	// event follows.
	dev, ino uint64
}

// Current reports whether the dir e was read from is still in its place. A
// consumer may apply an Event well after the Watcher read it (events wait
// in a channel); a dir removed or replaced since must not be acted on, and
// never needs to be: the Watcher reports the removal or the new dir in an
// Event of its own, later in the same stream.
func (e *Entry) Current() bool {
	var st unix.Stat_t
	return unix.Lstat(e.Dir, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Dev == e.dev && st.Ino == e.ino
}

// kept is e as the Watcher's book keeps it: without YAML (64 KiB a dir,
// for as many dirs as the hermes user makes), compared by its sum.
func (e Entry) kept() Entry {
	e.YAML, e.dropped = nil, e.Err == nil
	return e
}

// same reports whether a consumer holding a would need to hear about b.
func (a Entry) same(b Entry) bool {
	return a.Name == b.Name && a.Dir == b.Dir && a.dev == b.dev && a.ino == b.ino && a.UID == b.UID && a.GID == b.GID &&
		a.Down == b.Down && sameS6(a.S6, b.S6) && a.sum == b.sum && a.ModTime.Equal(b.ModTime) &&
		errText(a.Err) == errText(b.Err) && a.Trust.Root == b.Trust.Root &&
		a.Trust.UID == b.Trust.UID && a.Trust.GID == b.Trust.GID && errText(a.Trust.Refused) == errText(b.Trust.Refused)
}

func sameS6(a, b *s6dir.Dir) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// errText is the message a user would see; comparing it only detects a change
// worth reporting, it never classifies an error.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Event is the new state of one name in the scandir. It replaces whatever
// the consumer knew about Name:
//
//	Entry != nil  the service is wanted with this definition (new or changed)
//	Refused       the dir is there but over services_max: do not run it
//	Ignored != "" the entry is there but is no service dir (a symlink, not a
//	              dir, a name the name rule refuses, one that cannot be
//	              stat'ed or opened): why, at most errcap.Max bytes
//	none          the service is gone: stop and forget it; Replaced says
//	              another dir took the name (its Entry follows): nobody
//	              asked for a stop
//
// One Event has Synced set and an empty Name: it follows the first scan, once
// every service present when Run started has been reported. An Event with
// Barrier set and an empty Name follows what a Sync asked for: the
// consumer closes Barrier once it has applied the Events before it.
type Event struct {
	Name     string
	Entry    *Entry
	Refused  bool
	Ignored  string
	Replaced bool
	Synced   bool
	Barrier  chan<- struct{}
}
