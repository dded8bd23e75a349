// Package trust is hinit's one rule for who a definition found on disk may
// run as (SPEC §3). Everyone who reads a definition from a place the hermes
// user can reach (the scandir's service dirs and every file read from them)
// folds what it opened into a Judge and asks it; nobody else decides.
//
// The rule: a definition speaks with root's authority, and may choose its
// user, only if the dir and every file read from it are owned by root and
// writable by no one else. Otherwise:
//
//   - an object owned by root but writable by its group or by others is
//     refused: anyone might have written it, so no one is trusted to have;
//   - an object owned by a non-root user runs as that user, whatever the
//     definition says: that user could have written every byte of it;
//   - objects owned by two different non-root users are refused, and so is
//     an object writable by others (o+w) whoever owns it.
//
// The objects are judged by the fstat of the descriptors actually read, so
// what is judged is what was read, even when a writer swaps a file meanwhile.
// Symlinks are never objects: readers open with O_NOFOLLOW and refuse them.
//
// A definition is only what was judged if no one else can swap its dir
// DIR between the read and the start: an s6 servicedir's run, finish and
// log/run are executed later by path (DIR/run), and a service.yaml held in
// memory may still name paths through DIR (a command beside it, a workdir,
// a PATH entry, a file its program reads). Whoever may rename entries of
// the dir holding DIR (the scandir) can rename DIR away and put their own
// in its place (renameat2 RENAME_EXCHANGE), so that dir is one more object
// for every definition in it (AddExecParent): a root-owned one writable by no one else changes nothing;
// one owned by a non-root user makes the definition run as that user, who
// could have swapped it anyway, so that is no escalation. The same holds
// for every dir of the path above: whoever may put something else at the
// scandir's path, or at a dir above it, chooses what DIR/run names
// (AddReplacers). And the reader reads through a descriptor of the scandir
// it watches, never through the path, which may lead elsewhere by then.
package trust

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// errNothing is the verdict of a Judge that was shown no object.
var errNothing = errors.New("refused: no file was judged")

// Verdict is who a definition may run as.
type Verdict struct {
	// Root is set when every object is root-owned and writable only by
	// root: the definition's own `user` is honoured.
	Root bool
	// UID and GID are the owner the definition runs as when Root is unset.
	UID, GID int
	// Refused says why the definition must not run at all; nil otherwise.
	Refused error
}

// User is the user to run a definition that asks for asked: asked itself
// when the definition is trusted as root, the owner ("uid:gid") otherwise.
// Check Refused first.
func (v Verdict) User(asked string) string {
	if v.Root {
		return asked
	}
	return fmt.Sprintf("%d:%d", v.UID, v.GID)
}

// Essential is whether a definition that asks to be essential (asked) is
// one: only a definition trusted as root may end the container when it
// fails. Whoever could have written it could make it fail, with the exit
// status of their choice, which would be a shutdown hsvc gives root only.
func (v Verdict) Essential(asked bool) bool {
	return asked && v.Root
}

// MinRestart is the least time between two starts of a definition not
// trusted as root (its backoff's initial and max: backoff.initial gates
// every restart, restart_now_exit_codes' too). Its writer chooses its
// backoff, and one of 1ns with a program that exits at once had hinit
// start it without end: 2,700 starts in 10 s, a quarter of a core of PID
// 1, a thousand lines a second to docker logs. s6 waits a second between
// two starts of any service, as hinit does for an s6 dir.
const MinRestart = time.Second

// RestartFloor is the least backoff a definition gets: none when trusted
// as root, MinRestart otherwise.
func (v Verdict) RestartFloor() time.Duration {
	if v.Root {
		return 0
	}
	return MinRestart
}

// Judge folds the objects a definition was read from into a Verdict. The
// zero Judge has seen nothing, and refuses.
type Judge struct {
	owner   int // the non-root owner seen so far, or -1
	gid     int
	refused error
	seen    bool
	// rootWithdrawn says why the objects, root's as they may be, do not
	// give root's authority (AddReplacers).
	rootWithdrawn error
}

// ForeignLink reports whether a file of the dir dfd, as the fstat st of
// its descriptor shows it, has other hard links and another owner than the
// dir: a link the dir's owner made to someone else's file (root's, that
// only root may read), which root would read and quote back in errors, so
// it is not read. The owner's own file linked twice (root's in root's dir)
// is read. A dir that cannot be stat'ed counts as another owner.
func ForeignLink(dfd int, st *unix.Stat_t) bool {
	if st.Nlink <= 1 {
		return false
	}
	var dst unix.Stat_t
	return unix.Fstat(dfd, &dst) != nil || dst.Uid != st.Uid
}

// Add records one object read: path names it in messages, st is the fstat
// of the descriptor it was read through.
func (j *Judge) Add(path string, st *unix.Stat_t) {
	if !j.seen {
		j.owner, j.seen = -1, true
	}
	if j.refused != nil {
		return
	}
	uid, mode := int(st.Uid), st.Mode&0o7777
	switch {
	case mode&0o002 != 0:
		j.refused = fmt.Errorf("refused: %s is writable by every user (mode %04o); chmod o-w it", path, mode)
	case uid == 0 && mode&0o020 != 0:
		j.refused = fmt.Errorf("refused: %s is owned by root but writable by its group (mode %04o); chmod g-w it", path, mode)
	case uid == 0:
	case j.owner == -1:
		j.owner, j.gid = uid, int(st.Gid)
	case j.owner != uid:
		j.refused = fmt.Errorf("refused: %s is owned by uid %d but the rest by uid %d; one owner may define a service", path, uid, j.owner)
	}
}

// AddExecParent records the dir through which a definition's programs may
// be executed by path later (the scandir holding its dir): path names it
// in messages and st is its stat at the time of the read. It is judged as
// one more object, since its writers can swap the definition's dir for
// their own after it was judged.
func (j *Judge) AddExecParent(path string, st *unix.Stat_t) {
	j.Add(path, st)
}

// AddReplacers records who can put something else at path, an entry of
// the dir parent (st and pst: their lstat and stat at the time of the
// read), for a definition whose programs or files may be reached by a
// path through it (every dir from the scandir up): whoever may rename entries of
// parent. In a sticky dir (/run, /tmp: mode 1777) those are the entry's
// owner and the dir's, whatever the mode bits say; otherwise the dir's
// owner, and its group or every user when it is writable by them. A
// non-root owner among them counts as the owner of one more object (the
// definition runs as that user, or is refused beside another owner); a
// group or every user only withdraws root's authority: the definition
// then runs as the owner of the rest, and is refused if that is root.
// (The scandir's own path once replaced by its owner with a symlink to a
// root-owned tree made an s6 dir there run as root.)
func (j *Judge) AddReplacers(path, parent string, st, pst *unix.Stat_t) {
	owners := []*unix.Stat_t{pst}
	mode := pst.Mode & 0o7777
	switch {
	case mode&unix.S_ISVTX != 0:
		owners = append(owners, st)
	case mode&0o002 != 0:
		j.notRoot(fmt.Errorf("refused: %s can be replaced by every user (%s is mode %04o)", path, parent, mode))
	case mode&0o020 != 0:
		j.notRoot(fmt.Errorf("refused: %s can be replaced by group %d (%s is mode %04o)", path, pst.Gid, parent, mode))
	}
	for _, o := range owners {
		c := *o
		c.Mode &^= 0o022 // its owner only; its writers were judged above
		j.Add(path, &c)
	}
}

// notRoot records why the definition may not speak with root's authority,
// the first reason only.
func (j *Judge) notRoot(why error) {
	if j.rootWithdrawn == nil {
		j.rootWithdrawn = why
	}
}

// Verdict is the decision over every object added so far.
func (j *Judge) Verdict() Verdict {
	switch {
	case j.refused != nil:
		return Verdict{Refused: j.refused}
	case !j.seen:
		return Verdict{Refused: errNothing}
	case j.owner == -1 && j.rootWithdrawn != nil:
		return Verdict{Refused: j.rootWithdrawn}
	case j.owner == -1:
		return Verdict{Root: true}
	default:
		return Verdict{UID: j.owner, GID: j.gid}
	}
}
