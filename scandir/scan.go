package scandir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"hinit/errcap"
	"hinit/svcname"
)

// rescan reads every name again: those we know first, so names that
// vanished unseen are reported gone, then those on disk, listBatch names at
// a time. It holds the names it knows (a few times services_max) and one
// batch, never the whole listing: the hermes user can fill the scandir
// with any number of entries. It is the initial scan, the overflow
// recovery and the safety rescan.
func (w *Watcher) rescan(ctx context.Context, out chan<- Event) bool {
	w.lastScan = time.Now()
	w.over, w.overSaid = 0, true // the count is logged once, at the end
	known := map[string]bool{}
	for _, names := range []func(func(string) bool){maps.Keys(w.dirs.wds), maps.Keys(w.warned),
		maps.Keys(w.ignored), maps.Keys(w.book.accepted), maps.Keys(w.book.refused)} {
		for n := range names {
			known[n] = true
		}
	}
	if !w.update(ctx, out, known) {
		return false
	}
	ok := true
	err := w.eachBatch(func(batch []string) bool {
		fresh := map[string]bool{}
		for _, n := range batch {
			if !known[n] {
				fresh[n] = true
			}
		}
		ok = w.update(ctx, out, fresh)
		return ok
	})
	if !ok {
		return false
	}
	w.sayOver()
	w.overSaid = false
	w.scanEnd, w.rescanAt, w.lost = time.Now(), time.Time{}, false
	w.scanCost = w.scanEnd.Sub(w.lastScan)
	for _, b := range w.afterRescan { // Syncs that waited for this rescan
		if !send(ctx, out, Event{Barrier: b}) {
			return false
		}
	}
	w.afterRescan = nil
	switch {
	case err == nil:
		w.listGap = 0
	case transient(err):
		// What only a listing finds (names an overflow lost) must not
		// wait for the safety rescan: list again soon, as a look is.
		w.listGap = min(max(2*w.listGap, minRetryGap), maxRetryGap)
		w.rescanAt = w.scanEnd.Add(w.listGap)
		w.log.Warn("scandir: cannot list the scandir now; rechecked only the services already known, rescanning", "in", w.listGap, "err", err)
	default:
		w.log.Error("scandir: cannot list the scandir; rechecked only the services already known", "err", err)
	}
	return true
}

// listBatch is how many names rescan reads from the scandir at a time.
const listBatch = 256

// eachBatch calls f with the names of the scandir, listBatch at a time,
// until f returns false.
func (w *Watcher) eachBatch(f func([]string) bool) error {
	fd, err := w.openScandir()
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), w.dir)
	defer d.Close()
	for {
		batch, err := d.Readdirnames(listBatch)
		if len(batch) > 0 && !f(batch) {
			return nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", w.dir, err)
		}
	}
}

// readBatch is how many names update reads before it sends their events:
// it bounds the YAML held at once (readBatch × MaxYAMLSize, 2 MiB) when
// hundreds of dirs change together, as at boot or after an overflow.
const readBatch = 32

// update reads each dirty name afresh and sends what changed, readBatch
// names at a time in sorted order. It returns false when ctx ended before
// everything was sent.
func (w *Watcher) update(ctx context.Context, out chan<- Event, dirty map[string]bool) bool {
	for names := slices.Sorted(maps.Keys(dirty)); len(names) > 0; {
		n := min(len(names), readBatch)
		if !w.updateSome(ctx, out, names[:n]) {
			return false
		}
		names = names[n:]
	}
	return true
}

// updateSome reads names and sends what changed. Within a batch, removals
// free slots before new names take them; across batches, a name refused
// over services_max gets the slot a later batch frees.
func (w *Watcher) updateSome(ctx context.Context, out chan<- Event, names []string) bool {
	found := make(map[string]*Entry, len(names))
	why := make(map[string]string, len(names))
	sfd, err := w.openScandir()
	switch {
	case err == nil:
		defer unix.Close(sfd)
		read := names[:0:0]
		for _, n := range names {
			delete(w.again, n)
			e, y := w.look(sfd, n)
			if w.again[n] {
				continue // not read: as it was, until the retry
			}
			found[n], why[n] = e, y
			read = append(read, n)
		}
		names = read
	case transient(err):
		for _, n := range names {
			w.putOff(n, err)
		}
		return true
	} // else replaced: nothing is there; the root watch's event ends Run
	cleared, ignored := w.noteIgnored(names, why)
	evs, refused, unkept := w.book.apply(found)
	for _, n := range refused {
		w.log.Warn(fmt.Sprintf("scandir: refusing %s: more than %d services (services_max)", n, w.max), "svc", n)
	}
	for _, n := range unkept {
		w.leaveOut(n, "refusing it, not listed in status: more than %d services (services_max) and as many refused")
	}
	w.boundWatches(names, found, why)
	for i := range evs {
		if e := evs[i].Entry; e != nil && e.dropped {
			evs[i] = w.reread(sfd, e.Name)
		}
	}
	// A name no longer ignored is cleared before what it is now; one newly
	// ignored is reported after its removal as a service.
	for _, ev := range slices.Concat(cleared, evs, ignored) {
		if !send(ctx, out, ev) {
			return false
		}
	}
	return true
}

// boundWatches drops the watches that services_max does not pay for: of a
// dir ignored but not listed (noteIgnored), and of a dir with no
// service.yaml yet beyond max of them (pending). The hermes user can make
// any number of dirs, and every watch is root's, against root's limit.
// Those dirs are looked at again at each rescan.
func (w *Watcher) boundWatches(names []string, found map[string]*Entry, why map[string]string) {
	for _, n := range names {
		_, watched := w.dirs.wds[n]
		switch {
		case found[n] != nil || !watched:
			delete(w.pending, n)
		case why[n] != "":
			delete(w.pending, n)
			if _, listed := w.ignored[n]; !listed {
				w.unwatch(n)
			}
		case w.pending[n] || len(w.pending) < w.max:
			w.pending[n] = true
		default:
			w.leaveOut(n, "not watching it until it has a service.yaml: more than %d dirs wait for one (services_max)")
		}
	}
}

// leaveOut drops the watch of name, which services_max does not pay for,
// and counts it; the first one between rescans is logged (why takes max).
func (w *Watcher) leaveOut(name, why string) {
	w.unwatch(name)
	w.over++
	if !w.overSaid {
		w.overSaid = true
		w.log.Warn(fmt.Sprintf("scandir: %s: "+why+"; the others are counted at the next rescan", name, w.max), "svc", name)
	}
}

// reread reads again a dir the book promoted without its YAML, and
// records what it read. A dir gone since is reported gone: the book keeps
// its slot until the dir's own event says so, which frees it.
func (w *Watcher) reread(sfd int, name string) Event {
	e, _ := w.look(sfd, name) // a dir ignored since: its own event follows
	if w.again[name] {
		// Not read now: the slot goes back, the retry asks for one again.
		delete(w.book.accepted, name)
		return Event{Name: name}
	}
	if e == nil {
		return Event{Name: name}
	}
	w.book.accepted[name] = e.kept()
	return Event{Name: name, Entry: e}
}

// look classifies one name of the scandir sfd and returns its Entry, or nil when
// there is nothing to run there: gone, ignored, or no service.yaml yet. why
// says why an entry that is there is ignored (Event.Ignored); it is "" for
// a dot name, which is a writer's temporary dir. It keeps the name's watch
// in step with what it finds. It never follows a symlink nor opens anything
// but a dir (O_NOFOLLOW).
func (w *Watcher) look(sfd int, name string) (e *Entry, why string) {
	if name == "" || strings.HasPrefix(name, ".") {
		return nil, ""
	}
	path := filepath.Join(w.dir, name)
	var st unix.Stat_t
	err := unix.Fstatat(sfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		w.unwatch(name)
		delete(w.warned, name)
		return nil, ""
	case svcname.Check(name) != nil:
		// Before anything that would put the name in a message raw: the
		// name rule's error quotes it.
		why = svcname.Check(name).Error()
	case transient(err):
		w.putOff(name, err)
		return nil, ""
	case err != nil:
		why = "cannot stat it: " + err.Error()
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		why = "a symlink, never followed; rename a real dir into place"
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		why = "not a directory"
	default:
		return w.lookDir(sfd, name, path)
	}
	w.unwatch(name)
	return nil, errcap.Text(why, errcap.Max)
}

// lookDir watches a service dir, then reads it from the scandir sfd: in this order, so a
// service.yaml written between the two is seen by one or the other.
func (w *Watcher) lookDir(sfd int, name, path string) (*Entry, string) {
	werr := w.watch(name, path)
	if errors.Is(werr, unix.ENOENT) || errors.Is(werr, unix.ENOTDIR) {
		return nil, "" // removed or replaced since the lstat; its event follows
	}
	e, ok, err := readEntry(sfd, name, path, w.S6, w.chose, w.book.seed)
	switch {
	case transient(err) || transient(e.Err):
		w.putOff(name, errors.Join(err, e.Err))
		return nil, ""
	case err != nil:
		return nil, errcap.Text("cannot open it: "+err.Error(), errcap.Max)
	case werr != nil:
		w.warnOnce(name, "scandir: cannot watch service dir; its changes are seen at the next rescan", "err", werr)
	default:
		delete(w.warned, name)
	}
	if !ok {
		return nil, ""
	}
	return &e, ""
}

// openScandir opens the scandir for one batch of looks, if it is still the
// dir Run began to watch (openWatched).
func (w *Watcher) openScandir() (int, error) { return openWatched(w.dir, w.dev, w.ino) }

// openWatched opens dir, if it is still the dir of dev and ino: never
// following a symlink, and as a dir only, so that whatever the scandir's
// owner put at its path (it may rename the scandir, even in /run) makes
// no thread of PID 1 wait for a FIFO's writer, nor a link to a terminal
// PID 1's controlling terminal. The error wraps ErrScandirGone when dir is
// another, and is the system's own when it may pass (transient).
func openWatched(dir string, dev, ino uint64) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if transient(err) {
		return -1, fmt.Errorf("open %s: %w", dir, err)
	}
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", dir, ErrScandirGone)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != dev || st.Ino != ino {
		unix.Close(fd)
		if transient(err) {
			return -1, fmt.Errorf("stat %s: %w", dir, err)
		}
		return -1, fmt.Errorf("open %s: %w", dir, ErrScandirGone)
	}
	return fd, nil
}

// warnOnce logs msg for name unless it was the last thing said about name.
func (w *Watcher) warnOnce(name, msg string, attrs ...any) {
	if w.warned[name] == msg {
		return
	}
	w.warned[name] = msg
	w.log.Warn(msg, append([]any{"svc", name}, attrs...)...)
}
