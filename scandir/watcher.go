package scandir

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"hinit/s6dir"
	"hinit/trust"
)

// Watcher reports the dynamic services of one scandir. Its state belongs to
// the goroutine running Run; nothing else touches it, so it has no lock,
// but for watched, which OpenDir reads from any goroutine.
type Watcher struct {
	dir string
	max int
	log *slog.Logger

	// SafetyRescan is how often the whole scandir is read again in case an
	// event was ever missed; 0 turns it off. Set it before Run.
	SafetyRescan time.Duration
	// S6 makes a dir with an executable run and no service.yaml an s6
	// servicedir (compat: s6-overlay, SPEC §8). Set it before Run.
	S6 bool
	// OverflowGap is the least time between the end of a rescan and an
	// overflow's rescan, at least four times the last rescan's length:
	// the scandir's owner can overflow the queue at will, and each rescan
	// reads every entry. Set it before Run.
	OverflowGap time.Duration

	in     *inotify
	rootWd int32
	// dev and ino are the scandir Run began to watch: each look reads
	// relative to a descriptor of it (openScandir), never through a path
	// someone may have replaced since (its owner can rename it, even in
	// /run).
	dev, ino uint64
	// watched is dir, dev and ino once Run has begun to watch, for
	// OpenDir; nil before.
	watched atomic.Pointer[watchedDir]
	// begun is closed once Run has begun to watch, or failed to; ended
	// once it has returned.
	begun, ended chan struct{}
	// syncs are the Sync requests Run has yet to answer, each a barrier
	// to send; waker is the inotify instance whose read a request wakes
	// (nil while polling, or before Run reads).
	syncs chan chan<- struct{}
	waker atomic.Pointer[inotify]
	// lost: an inotify queue overflow lost events, and the rescan that
	// finds what they said is due (rescanAt, put off). The barriers of
	// Syncs answered meanwhile wait in afterRescan: that rescan sends them
	// once it is done. A rescan due only to retry a failed listing holds
	// no Sync: it may be a minute away, and finds nothing an event said.
	lost        bool
	afterRescan []chan<- struct{}
	// chose are the entries of the scandir's path up to its last
	// symlink when Run resolved it (trust.Resolve): whoever could
	// replace one chose the dir watched, and is judged with every entry
	// (readEntry).
	chose  []trust.Link
	dirs   watches // the service dirs' own watches
	logs   watches // with S6: the watches of s6 dirs' log/, by their dir's name
	warned map[string]string
	book   *book
	// ignored holds, for at most max names, why each is ignored, as last
	// sent (Event.Ignored); over counts the ignored names left out since
	// the last rescan began, overLogged the count last logged, overSaid
	// whether one was logged since (noteIgnored).
	ignored    map[string]string
	pending    map[string]bool // watched dirs with no service.yaml yet, at most max
	over       int
	overLogged int
	overSaid   bool
	lastScan   time.Time
	scanEnd    time.Time     // when the last rescan ended
	scanCost   time.Duration // how long it took
	rescanAt   time.Time     // an overflow's rescan put off, or a failed listing's again; zero: none due
	// again are the names a look could not read for want of a resource
	// (transient: EMFILE, ENOMEM...), left as they were, to be read again
	// at retryAt; retryGap doubles while the want lasts.
	again    map[string]bool
	retryAt  time.Time
	retryGap time.Duration
	// listGap is the wait before a rescan whose listing failed for want
	// of a resource is done again (rescanAt); it doubles as retryGap does.
	listGap time.Duration
}

// New returns a Watcher of dir that accepts at most max services (SPEC
// services_max; the caller applies the default, and max <= 0 refuses all).
func New(dir string, max int, log *slog.Logger) *Watcher {
	return &Watcher{
		dir:          dir,
		max:          max,
		log:          log,
		SafetyRescan: DefaultSafetyRescan,
		OverflowGap:  DefaultOverflowGap,
		dirs:         newWatches(),
		logs:         newWatches(),
		begun:        make(chan struct{}),
		ended:        make(chan struct{}),
		syncs:        make(chan chan<- struct{}, 16),
		warned:       map[string]string{},
		ignored:      map[string]string{},
		pending:      map[string]bool{},
		again:        map[string]bool{},
		book:         newBook(max),
	}
}

// Run watches the scandir and sends an Event on out for every change, until
// ctx is done (then it returns nil). It first reports every service present,
// then an Event with Synced set. It returns an error when the scandir cannot
// be watched or goes away (ErrScandirGone). Call it once per Watcher.
func (w *Watcher) Run(ctx context.Context, out chan<- Event) error {
	defer close(w.ended)
	in, err := openInotify()
	switch {
	case err == nil:
		if err = w.watchScandir(in); !noWatch(err) {
			defer in.close()
			break
		}
		// An instance but no watch for the scandir (the watches are
		// per user too): poll as without an instance.
		in.close()
		w.log.Warn(fmt.Sprintf("scandir: no inotify watch for the scandir; reading it every %v until there is one", PollEvery), "err", err)
		in = nil
		err = w.watchScandir(nil)
	case transient(err):
		// No inotify instance for now (the host's fs.inotify.max_user_instances
		// is per user, shared by every container of root): read the
		// scandir every PollEvery instead of starting no service at all.
		w.log.Warn(fmt.Sprintf("scandir: no inotify instance; reading the scandir every %v until there is one", PollEvery), "err", err)
		in = nil
		err = w.watchScandir(nil)
	}
	close(w.begun) // watching, or failed to: Watches answers either way
	if err != nil {
		return err
	}
	synced := false
	if in == nil {
		if in, err = w.poll(ctx, out); in == nil {
			return err
		}
		defer in.close()
		synced = true
	}
	// Wake a waiting read when ctx ends; the loop checks ctx after every
	// deadline it sets, so this past deadline is never lost.
	stop := context.AfterFunc(ctx, func() { in.setDeadline(time.Unix(1, 0)) })
	defer stop()
	w.waker.Store(in)
	defer w.waker.Store(nil)
	if !w.rescan(ctx, out) || !synced && !send(ctx, out, Event{Synced: true}) {
		return nil
	}
	return w.loop(ctx, out)
}

// watchScandir watches the scandir itself with in (nil: poll) and records
// which dir that is. A path with a symlink in it is resolved once, so that
// the paths services are started by are the ones judged (execParent).
func (w *Watcher) watchScandir(in *inotify) error {
	w.in = in
	abs, err := filepath.Abs(w.dir)
	if err != nil {
		return fmt.Errorf("watch scandir: %w", err)
	}
	if w.dir, w.chose, err = trust.Resolve(abs); err != nil {
		return fmt.Errorf("watch scandir: %w", err)
	}
	return w.watchRoot(in)
}

// watchRoot watches the resolved scandir with in (nil: poll) and records
// its identity; when one is recorded already (poll found an inotify
// instance), the dir must still be that one (ErrScandirGone).
func (w *Watcher) watchRoot(in *inotify) error {
	w.in = in
	var err error
	if in == nil {
		w.rootWd = -1
	} else if w.rootWd, err = in.add(w.dir, rootMask); err != nil {
		return fmt.Errorf("watch scandir: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Stat(w.dir, &st); err != nil { // after the watch: a swap since is its event
		return fmt.Errorf("watch scandir: %w", err)
	}
	if at := w.watched.Load(); at != nil {
		if st.Dev != at.dev || st.Ino != at.ino {
			return fmt.Errorf("watch scandir: %s: %w", w.dir, ErrScandirGone)
		}
		return nil
	}
	w.dev, w.ino = st.Dev, st.Ino
	w.watched.Store(&watchedDir{dir: w.dir, dev: st.Dev, ino: st.Ino})
	return nil
}

// watchedDir is the scandir Run watches: its resolved path and identity.
type watchedDir struct {
	dir      string
	dev, ino uint64
}

// OpenDir opens the scandir Run watches, for another goroutine to change
// an entry of it relative to the descriptor (hsvc unregister removes a
// dir): by path as Run opens it (openWatched; os.OpenRoot(path) waited on
// a FIFO and took a terminal for PID 1's), then checked to be the very dir
// watched, so that nothing is done through a path the scandir's owner
// replaced since. It fails before Run has begun to watch, and with
// ErrScandirGone once the dir at the path is another.
func (w *Watcher) OpenDir() (*os.File, error) {
	at := w.watched.Load()
	if at == nil {
		return nil, errors.New("scandir: not watched yet")
	}
	fd, err := openWatched(at.dir, at.dev, at.ino)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), at.dir), nil
}

// Watches reports whether the dir of device dev and inode ino is the
// scandir Run watches. It waits until Run has begun to watch (a request
// may come in just after hinit's control socket opened), or ctx ends:
// false then, and when Run could not watch. A dir is told by its
// identity, never by a path, which may be relative, go through a
// symlink, or have been replaced since.
func (w *Watcher) Watches(ctx context.Context, dev, ino uint64) bool {
	select {
	case <-w.begun:
	case <-ctx.Done():
		return false
	}
	at := w.watched.Load()
	return at != nil && at.dev == dev && at.ino == ino
}

// Sync returns once every change made in the scandir before it was called
// has reached Run's consumer (s6-svscanctl -a: "scan now"; hermes calls it
// between making a service dir and its first s6-svc). It reads what inotify
// has queued at once, without waiting for the loop's turn (while polling,
// it waits for the next rescan, which it never brings forward: anyone who
// may reach hinit may call it), then waits for the consumer's Barrier. It
// returns an error when ctx ends first, or Run is not running.
func (w *Watcher) Sync(ctx context.Context) error {
	select {
	case <-w.begun:
	case <-ctx.Done():
		return ctx.Err()
	}
	done := make(chan struct{})
	select {
	case w.syncs <- done:
	case <-w.ended:
		return ErrScandirGone
	case <-ctx.Done():
		return ctx.Err()
	}
	// After the request is queued: the loop sets its deadline, then
	// looks at the queue, then reads; this past deadline, set after the
	// loop's, wakes the read, or the request is seen before it.
	if in := w.waker.Load(); in != nil {
		in.setDeadline(time.Unix(1, 0))
	}
	select {
	case <-done:
		return nil
	case <-w.ended:
		return ErrScandirGone
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answerSyncs answers the Sync requests queued: read handles what changed
// before them (what inotify queued), then each gets its Barrier. It
// reports whether there were any, and false for ok when ctx ended first.
func (w *Watcher) answerSyncs(ctx context.Context, out chan<- Event, read func() bool) (asked, ok bool) {
	var barriers []chan<- struct{}
	for more := true; more; {
		select {
		case b := <-w.syncs:
			barriers = append(barriers, b)
		default:
			more = false
		}
	}
	if len(barriers) == 0 {
		return false, true
	}
	if !read() {
		return true, false
	}
	if w.lost {
		w.afterRescan = append(w.afterRescan, barriers...)
		return true, true
	}
	for _, b := range barriers {
		if !send(ctx, out, Event{Barrier: b}) {
			return true, false
		}
	}
	return true, true
}

// loop handles one batch of inotify events at a time.
func (w *Watcher) loop(ctx context.Context, out chan<- Event) error {
	for {
		if err := w.in.setDeadline(w.nextRescan()); err != nil {
			return fmt.Errorf("set inotify deadline: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		// A request queued after this look sets its past deadline
		// after the one above, and wakes the read.
		if asked, ok := w.answerSyncs(ctx, out, func() bool { return w.readQueued(ctx, out) }); !ok {
			return nil
		} else if asked {
			continue // readQueued cleared the deadline
		}
		evs, err := w.in.read()
		next := w.nextRescan()
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded) && (next.IsZero() || time.Now().Before(next)):
			continue // woken before its deadline: by a Sync
		case errors.Is(err, os.ErrDeadlineExceeded) && w.retryDue():
			if !w.retry(ctx, out) {
				return nil
			}
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
			if !w.rescan(ctx, out) { // the safety rescan, or an overflow's put off
				return nil
			}
			continue
		case err != nil:
			return err
		}
		if ok, err := w.handle(ctx, out, evs); !ok {
			return err
		}
	}
}

// handle turns a batch of inotify events into Events on out. It returns
// false, with the error that ends Run or nil, when Run must end.
func (w *Watcher) handle(ctx context.Context, out chan<- Event, evs []rawEvent) (bool, error) {
	dirty, overflow, err := w.note(evs)
	if err != nil {
		return false, err
	}
	if overflow {
		gap := max(w.OverflowGap, 4*w.scanCost)
		due := w.scanEnd.Add(gap)
		if !time.Now().Before(due) {
			w.log.Warn("scandir: inotify queue overflowed; rescanning")
			return w.rescan(ctx, out), nil
		}
		// Put off, the events meanwhile still handled; a failed
		// listing's retry due later is brought forward.
		if w.rescanAt.IsZero() || due.Before(w.rescanAt) {
			w.log.Warn("scandir: inotify queue overflowed; rescanning soon", "in", time.Until(due).Round(time.Millisecond))
			w.rescanAt = due
		}
		w.lost = true // found by the rescan due
	}
	return w.update(ctx, out, dirty), nil
}

// readQueued handles, for a Sync, the events inotify has queued, without
// waiting for more. A Run-ending error is left for the loop's next read
// to find again.
func (w *Watcher) readQueued(ctx context.Context, out chan<- Event) bool {
	evs := w.in.readQueued(nil) // whatever the deadline a Sync set
	if len(evs) == 0 {
		return true
	}
	ok, _ := w.handle(ctx, out, evs)
	return ok
}

// PollEvery is how often a Watcher without inotify reads the whole
// scandir again (Run).
const PollEvery = time.Second

// poll is loop without inotify: a rescan every PollEvery (or four times
// what the last one took, when that is longer), which also reads
// again the names a look could not read, until an inotify instance can be
// had again (another container's watcher gone): poll returns it, watching
// the scandir, and Run goes on as if it had had one from the start. It
// returns nil when ctx ends, with ErrScandirGone when the scandir was
// removed or replaced meanwhile (the rescan that found it so reported its
// services gone). An instance that cannot watch the scandir (no watch
// left: ENOSPC) is closed, and polling goes on.
func (w *Watcher) poll(ctx context.Context, out chan<- Event) (*inotify, error) {
	if !w.rescan(ctx, out) || !send(ctx, out, Event{Synced: true}) {
		return nil, nil
	}
	watchSaid := false
	var waiting []chan<- struct{} // Syncs, answered after the next rescan
	for {
		// Every PollEvery, but never more than a fifth of the time, as
		// an overflow's rescans: the hermes user may fill the scandir
		// with names, and each rescan lists them all. A Sync waits for
		// that rescan rather than bringing it forward, so s6-svscanctl
		// -a cannot make PID 1 read the scandir at will.
		t := time.NewTimer(w.pollGap())
	wait:
		for {
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, nil
			case b := <-w.syncs:
				waiting = append(waiting, b)
			case <-t.C:
				break wait
			}
		}
		if !w.rescan(ctx, out) {
			return nil, nil
		}
		if err := w.stillThere(); err != nil {
			return nil, err // as the root watch's event would have ended Run
		}
		for _, b := range waiting {
			if !send(ctx, out, Event{Barrier: b}) {
				return nil, nil
			}
		}
		waiting = nil
		if in, err := openInotify(); err == nil {
			err := w.watchRoot(in)
			if err == nil {
				w.log.Info("scandir: an inotify instance at last; reading the scandir only when it changes")
				return in, nil
			}
			in.close()
			w.in, w.rootWd = nil, -1 // still polling: watch and look see no instance
			if !noWatch(err) {
				return nil, err // replaced, or gone
			}
			if !watchSaid {
				watchSaid = true
				w.log.Warn(fmt.Sprintf("scandir: an inotify instance but no watch for the scandir; reading it every %v still", PollEvery), "err", err)
			}
		}
	}
}

// pollGap is the wait between two rescans of a polling Watcher: PollEvery,
// or four times what the last rescan took when that is longer.
func (w *Watcher) pollGap() time.Duration { return max(PollEvery, 4*w.scanCost) }

// stillThere reports ErrScandirGone when the scandir Run watches has been
// removed or replaced: what its root watch's event tells a Watcher that
// has inotify, a polling one asks after each rescan.
func (w *Watcher) stillThere() error {
	fd, err := w.openScandir()
	if errors.Is(err, ErrScandirGone) {
		return err
	}
	if err == nil {
		unix.Close(fd)
	}
	return nil
}

// noWatch reports whether adding a watch failed for want of one (ENOSPC:
// fs.inotify.max_user_watches, per user like the instances, used up) or of
// another resource: a Watcher that polls goes on polling then.
func noWatch(err error) bool {
	return errors.Is(err, unix.ENOSPC) || transient(err)
}

// nextRescan is the deadline of the next rescan: an overflow's put off, or
// the safety rescan, or a retry of names a look could not read; zero
// (none) when none is due.
func (w *Watcher) nextRescan() time.Time {
	next := w.rescanAt
	if w.SafetyRescan > 0 {
		if safety := w.lastScan.Add(w.SafetyRescan); next.IsZero() || safety.Before(next) {
			next = safety
		}
	}
	if !w.retryAt.IsZero() && (next.IsZero() || w.retryAt.Before(next)) {
		next = w.retryAt
	}
	return next
}

// Retries of names a look could not read for want of a resource: the first
// after minRetryGap, then twice as long each time the want lasts, up to
// maxRetryGap; the gap starts again once a retry reads everything.
const (
	minRetryGap = time.Second
	maxRetryGap = time.Minute
)

// retryDue reports whether the retry is what the deadline was for.
func (w *Watcher) retryDue() bool {
	return !w.retryAt.IsZero() && !time.Now().Before(w.retryAt)
}

// retry reads again the names a look could not read.
func (w *Watcher) retry(ctx context.Context, out chan<- Event) bool {
	names := w.again
	w.again, w.retryAt = map[string]bool{}, time.Time{}
	if !w.update(ctx, out, names) {
		return false
	}
	if len(w.again) == 0 {
		w.retryGap = 0
	}
	return true
}

// putOff leaves name as it was, to be read again at the next retry: a look
// could not read it for want of a resource (transient).
func (w *Watcher) putOff(name string, err error) {
	if len(w.again) == 0 {
		w.retryGap = min(max(2*w.retryGap, minRetryGap), maxRetryGap)
		w.log.Warn("scandir: cannot read now; trying again", "svc", name, "in", w.retryGap, "err", err)
	}
	w.again[name] = true
	if w.retryAt.IsZero() {
		w.retryAt = time.Now().Add(w.retryGap)
	}
}

// transient reports whether err is the want of a resource, which passes,
// rather than something about what was read.
func transient(err error) bool {
	return errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) ||
		errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.ENOBUFS)
}

// note turns a batch of raw events into dirty names. It never reads the
// disk: what changed is read once per name afterwards.
func (w *Watcher) note(evs []rawEvent) (dirty map[string]bool, overflow bool, err error) {
	dirty = map[string]bool{}
	for _, ev := range evs {
		switch {
		case ev.mask&unix.IN_Q_OVERFLOW != 0:
			overflow = true
		case ev.wd == w.rootWd:
			if ev.mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0 {
				return nil, false, fmt.Errorf("watch %s: %w", w.dir, ErrScandirGone)
			}
			dirty[ev.name] = true
		default:
			w.noteService(ev, dirty)
		}
	}
	return dirty, overflow, nil
}

// noteService handles an event from a service dir's own watch. A created
// service.yaml is skipped: its writer's close (IN_CLOSE_WRITE) follows, and
// reading it before would see it empty. With S6, every other name counts
// too (run made executable, finish, notification-fd, log...), but for
// what hinit never reads: supervise/, event/ and dot names; so does every
// name in the dir's log/ (its own watch).
func (w *Watcher) noteService(ev rawEvent, dirty map[string]bool) {
	if name, ok := w.logs.names[ev.wd]; ok { // an s6 dir's log/: log/run
		if ev.mask&unix.IN_IGNORED != 0 {
			w.logs.dropWd(ev.wd)
		}
		if ev.mask&unix.IN_IGNORED != 0 || s6Name(ev.name) {
			dirty[name] = true
		}
		return
	}
	name, ok := w.dirs.names[ev.wd]
	switch {
	case !ok:
	case ev.mask&unix.IN_IGNORED != 0:
		w.dirs.dropWd(ev.wd)
		dirty[name] = true
	case ev.name == s6dir.DownFile:
		dirty[name] = true
	case ev.name == s6dir.DefinitionFile:
		if ev.mask&unix.IN_CREATE == 0 {
			dirty[name] = true
		}
	case w.S6 && s6Name(ev.name):
		dirty[name] = true
	}
}

// s6Name reports whether a change to name in a service dir may change what
// the dir says as an s6 servicedir.
func s6Name(name string) bool {
	return name != "" && name != "supervise" && name != "event" && !strings.HasPrefix(name, ".")
}

// send delivers ev unless ctx ends first.
func send(ctx context.Context, out chan<- Event, ev Event) bool {
	select {
	case out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
