package manager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"hinit/config"
	"hinit/s6dir"
	"hinit/scandir"
	"hinit/supervise"
	"hinit/svcname"
)

// dynamic turns scandir events into services (SPEC §3, §4). One goroutine
// applies the events in order; notes holds what status must show about dirs
// that are not running: refused over services_max, broken, or ignored by
// the watcher (a symlink, not a dir, a bad name: at most services_max of
// those, the watcher's bound).
type dynamic struct {
	m *Manager

	mu    sync.Mutex
	notes map[string]note // name -> why the dir is not a service, guarded by mu
	seq   uint64          // of the last note, guarded by mu
	// noteCh is closed, and replaced, when a note is set or cleared
	// (noteWatch): a dir read, refused or gone, which a register waits
	// for (waitAdded),
	// guarded by mu.
	noteCh chan struct{}
	// leaving holds the names unregistered whose dir is not removed yet
	// (false) or could not be (true: it stays ignored until it is gone),
	// guarded by mu.
	leaving map[string]bool
	// leftCh holds, for each name leaving whose removal is not over, a
	// channel closed when it is (left), guarded by mu.
	leftCh map[string]chan struct{}
	// held is the last event of each name leaving (false), guarded by mu:
	// a dir may be made again once the old one is removed, before the
	// unregister is over. Once it is (left), the event is due: the event
	// goroutine applies it (redo), unless it has applied a newer one.
	held map[string]heldEvent
	redo chan struct{} // cap 1: an event in held is due
	// settling counts, by name, the registers answered whose dir the
	// watcher has not yet added or refused (settleRegister), guarded by
	// mu: each holds a slot (occupied), so that the registers a user may
	// leave waiting, each a goroutine of PID 1's, stay within services_max.
	settling map[string]int
}

type heldEvent struct {
	ev  scandir.Event
	due bool
}

func newDynamic(m *Manager) *dynamic {
	return &dynamic{m: m, notes: make(map[string]note), leaving: make(map[string]bool), leftCh: make(map[string]chan struct{}), noteCh: make(chan struct{}),
		held: make(map[string]heldEvent), redo: make(chan struct{}, 1), settling: make(map[string]int)}
}

// WatchScandir watches the scandir until ctx ends and returns a channel
// closed once the dirs present at the start are registered (SPEC §2 step
// 6: before main).
func (m *Manager) WatchScandir(ctx context.Context) <-chan struct{} {
	synced := make(chan struct{})
	if m.scandir == "" {
		close(synced)
		return synced
	}
	events := make(chan scandir.Event, 64)
	w := scandir.New(m.scandir, m.cfg.ServicesMax, m.log)
	w.S6 = m.cfg.S6() // compat: s6-overlay reads s6 servicedirs too
	m.watcher.Store(w)
	go func() {
		if err := w.Run(ctx, events); err != nil {
			m.log.Error(fmt.Sprintf("scandir watcher stopped: %v; dynamic services are no longer picked up", err))
			m.watchErr = err
			close(m.watchDown)
		}
		close(events) // nothing more comes: main need not wait for a sync
	}()
	go func() {
		once := sync.OnceFunc(func() { close(synced) })
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-events:
				if !ok {
					once()
					events = nil // the redo timer still applies what is held
					continue
				}
				if ev.Synced {
					once()
					continue
				}
				if ev.Barrier != nil {
					close(ev.Barrier) // a Sync: the events before it are applied
					continue
				}
				eventArrived(ev)
				m.dyn.apply(ev)
			case <-m.dyn.redo:
				m.dyn.applyDue()
			}
		}
	}()
	return synced
}

// eventArrived is called on the event goroutine before it applies an
// event; a test holds it there, as a watcher busy with other dirs would.
var eventArrived = func(scandir.Event) {}

// apply brings the group in line with one scandir event.
func (d *dynamic) apply(ev scandir.Event) {
	if !d.admit(ev) {
		return
	}
	g := d.m.group
	existing := g.Get(ev.Name)
	if existing != nil && existing.Status().Source == config.SourceStatic {
		d.note(ev.Name, fmt.Sprintf("refused: %q is a static service of hinit.yaml", ev.Name))
		d.m.log.Warn("scandir dir ignored: the name belongs to a static service", "svc", ev.Name)
		return
	}
	switch {
	case ev.Refused:
		if existing != nil {
			g.Remove(ev.Name, true)
		}
		d.note(ev.Name, fmt.Sprintf("refused: more than %d services (services_max)", d.m.cfg.ServicesMax))
	case ev.Ignored != "":
		if existing != nil { // the watcher removes it first; never run what is not a dir
			g.Remove(ev.Name, true)
		}
		d.note(ev.Name, "ignored: "+ev.Ignored)
	case ev.Entry == nil && ev.Replaced:
		// Another dir under the name: a new service, whose add
		// follows. Nobody asked the old one to stop, so a gateway gets
		// no planned-stop marker: it would record "stopped" for the
		// profile whose new gateway runs.
		d.note(ev.Name, "")
		if existing != nil {
			d.m.log.Info("service dir replaced by another: stopping the old one", "svc", ev.Name)
			g.Remove(ev.Name, false)
		}
	case ev.Entry == nil:
		d.note(ev.Name, "")
		if existing != nil {
			d.m.log.Info("service dir removed: stopping", "svc", ev.Name)
			g.Remove(ev.Name, true)
		}
	default:
		if !ev.Entry.Current() {
			// Read before its dir was removed or replaced: an unregister
			// that has finished since (left) must not start the service
			// again, and a new dir's own event follows this one.
			return
		}
		def, err := d.define(ev.Entry)
		if err != nil {
			d.m.log.Error(err.Error(), "svc", ev.Name)
			d.note(ev.Name, err.Error())
			return // a running service keeps its last good definition
		}
		d.note(ev.Name, "")
		if existing != nil {
			existing.Update(def) // applies at its next start
			return
		}
		if _, err := g.Add(def, !ev.Entry.Down); err != nil && !errors.Is(err, supervise.ErrClosed) {
			d.m.log.Error("cannot add service", "svc", ev.Name, "err", err)
		}
	}
}

// admit reports whether ev is to be applied now. An unregistered name's
// dir goes once its process is gone: its events wait in held until the
// unregister is over. A dir that could not be removed stays ignored until
// its removal is seen (gone).
func (d *dynamic) admit(ev scandir.Event) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	stuck, ok := d.leaving[ev.Name]
	switch {
	case !ok:
		delete(d.held, ev.Name) // this event is newer
		return true
	case !stuck:
		d.held[ev.Name] = heldEvent{ev: ev}
	case ev.Entry == nil && !ev.Refused && ev.Ignored == "":
		delete(d.leaving, ev.Name) // gone
		delete(d.notes, ev.Name)
	}
	return false
}

// applyDue applies the held events whose unregister is over. It runs on
// the event goroutine, so no newer event of their names was applied since
// they were held (apply drops a held event when it applies a newer one).
func (d *dynamic) applyDue() {
	d.mu.Lock()
	var due []scandir.Event
	for name, h := range d.held {
		if h.due {
			due = append(due, h.ev)
			delete(d.held, name)
		}
	}
	d.mu.Unlock()
	for _, ev := range due {
		d.apply(ev) // an old dir's entry is no longer Current
	}
}

// define reads a dynamic service: a full definition or a template
// reference rendered from hinit.yaml. Who it runs as is the trust rule's
// verdict: writing into the scandir never yields root (SPEC §3).
func (d *dynamic) define(e *scandir.Entry) (*config.Service, error) {
	file := filepath.Join(e.Dir, s6dir.DefinitionFile)
	if e.Err != nil {
		// It names the file at fault already, which may be another
		// (notification-fd, run, the dir): no prefix of service.yaml.
		return nil, e.Err
	}
	if e.S6 != nil { // an s6 servicedir: root's when root-owned, else its owner's
		def := s6Service(e.Name, e.Dir, e.S6, e.Trust.User("0"))
		d.m.s6Marker(def)
		return def, nil
	}
	def, ref, err := config.ParseService(file, e.YAML, e.Name)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, errors.New(strings.Join(ce.Lines(), "; "))
		}
		return nil, err
	}
	if ref != nil {
		if def, err = d.m.cfg.Render(*ref); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, ref.Line, err)
		}
	} else {
		// A template's essential is hinit.yaml's word; a definition's own
		// only when root wrote it.
		if def.Essential && !e.Trust.Essential(true) {
			d.m.log.Warn("essential: true ignored: only a definition root wrote may end the container", "svc", e.Name)
		}
		def.Essential = e.Trust.Essential(def.Essential)
		if floor := e.Trust.RestartFloor(); def.Backoff.Initial < floor {
			d.m.log.Warn(fmt.Sprintf("backoff.initial %v raised to %v: the least a definition root did not write gets", def.Backoff.Initial, floor), "svc", e.Name)
			def.Backoff.Initial = floor
			def.Backoff.Max = max(def.Backoff.Max, floor)
		}
	}
	def.User = e.Trust.User(def.User) // the trust rule (package trust)
	return def, nil
}

// note records (or, with "", clears) why name is not a running service.
// A clear wakes noteWatch's callers too: it is how a register waiting for
// its dir hears that the dir is gone before it was read, and will never be
// a service (waitAdded).
func (d *dynamic) note(name, why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if why == "" {
		delete(d.notes, name)
		close(d.noteCh)
		d.noteCh = make(chan struct{})
	} else {
		d.setNote(name, why)
	}
}

// note is why a dir is not a service, its place among the notes set, and
// since when it has said so (status's since).
type note struct {
	why   string
	seq   uint64
	since time.Time
}

// setNote sets name's note and wakes noteWatch's callers. Caller holds mu.
func (d *dynamic) setNote(name, why string) {
	d.seq++
	since := time.Now()
	if old, ok := d.notes[name]; ok && old.why == why {
		since = old.since // the same reason, read again (a rescan)
	}
	d.notes[name] = note{why, d.seq, since}
	close(d.noteCh)
	d.noteCh = make(chan struct{})
}

// noteWatch returns the number of the last note set and a channel closed
// when another is, or a note is cleared.
func (d *dynamic) noteWatch() (uint64, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seq, d.noteCh
}

// notedSince is the note of name if it was set after the note number
// since, else "".
func (d *dynamic) notedSince(name string, since uint64) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n, ok := d.notes[name]; ok && n.seq > since {
		return n.why
	}
	return ""
}

// leave marks name as unregistered: events for its dir are ignored until
// left is called.
func (d *dynamic) leave(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.leaving[name] = false
	d.leftCh[name] = make(chan struct{})
	delete(d.notes, name)
	delete(d.held, name)
}

// left ends leave once the dir is removed. When it could not be (err),
// which status then shows, its events stay ignored until the watcher
// reports it gone (gone): an event read before the failed removal would
// otherwise start the service again, its dir being still in place.
func (d *dynamic) left(name string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ch, ok := d.leftCh[name]; ok {
		close(ch)
		delete(d.leftCh, name)
	}
	if err == nil {
		delete(d.leaving, name)
		if h, ok := d.held[name]; ok {
			d.held[name] = heldEvent{ev: h.ev, due: true}
			select {
			case d.redo <- struct{}{}:
			default: // already due: applyDue takes every due event
			}
		}
		return
	}
	d.leaving[name] = true
	delete(d.held, name) // ignored until gone
	d.setNote(name, "unregistered, but its dir is left: "+err.Error())
}

// leavingState reports whether name is unregistered and its dir not yet
// removed (ok), and whether its removal failed (stuck).
func (d *dynamic) leavingState(name string) (stuck, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	stuck, ok = d.leaving[name]
	return stuck, ok
}

// leaveDone is closed when the unregister of name under way ends (left);
// nil when none is.
func (d *dynamic) leaveDone(name string) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ch, ok := d.leftCh[name]; ok {
		return ch
	}
	return nil
}

// occupied is how many scandir dirs are known to hold a slot of services_max:
// the dynamic services supervised and the unregistered ones whose dir is
// not removed. The watcher's count may differ: a dir whose definition does
// not render holds a slot too, and an unregistered one whose owner removed
// its dir already does not (register is then refused a moment early).
func (d *dynamic) occupied() int {
	n := 0
	for _, s := range d.m.group.List() {
		// An s6 dir's logger (NAME/log, not a dir name) shares its dir.
		if svcname.Valid(s.Name()) && s.Status().Source != config.SourceStatic {
			n++
		}
	}
	d.mu.Lock()
	n += len(d.leaving)
	var settling []string
	for name := range d.settling {
		if _, ok := d.leaving[name]; !ok {
			settling = append(settling, name)
		}
	}
	d.mu.Unlock()
	for _, name := range settling { // the group's lock is never taken under mu
		// Published, not a service yet, and still there: a dir removed
		// before the watcher listed it sends no event to end the wait.
		if _, err := os.Lstat(filepath.Join(d.m.scandir, name)); err == nil && d.m.group.Get(name) == nil {
			n++
		}
	}
	return n
}

// settle counts a register of name waiting for the watcher (occupied)
// and returns what ends the count, to be called once.
func (d *dynamic) settle(name string) (done func()) {
	d.mu.Lock()
	d.settling[name]++
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.settling[name]--; d.settling[name] <= 0 {
			delete(d.settling, name)
		}
	}
}

// why is what status shows about the dir name that is not a service, or "".
func (d *dynamic) why(name string) string {
	st, ok := d.notedOne(name)
	if !ok {
		return ""
	}
	return st.Reason
}

// unapplied is why the dir of name, a scandir service, holds a definition
// that is not applied (the service runs its last good one), or "".
func (d *dynamic) unapplied(name string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.notes[name].why
}

// notedOne is the status of the dir name when it is not a service.
func (d *dynamic) notedOne(name string) (supervise.Status, bool) {
	d.mu.Lock()
	n, ok := d.notes[name]
	d.mu.Unlock()
	if !ok || d.m.group.Get(name) != nil {
		return supervise.Status{}, false
	}
	return notedStatus(name, n), true
}

// notedStatus shows a dir that is not a service as a service down.
func notedStatus(name string, n note) supervise.Status {
	return supervise.Status{Name: shown(name), State: supervise.StateDown, Want: supervise.WantDown, Since: n.since, Reason: n.why, Source: config.SourceScandir}
}

// shown is name as status shows it. A name the name rule refuses (one the
// watcher ignores) is quoted and cut, so no byte the hermes user chose, an
// escape sequence or a newline forging a row, reaches a terminal raw.
func shown(name string) string {
	if svcname.Check(name) != nil {
		return svcname.Quote(name)
	}
	return name
}

// noted lists the dirs that are not services, as statuses.
func (d *dynamic) noted() []supervise.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []supervise.Status
	for name, n := range d.notes {
		if d.m.group.Get(name) == nil {
			out = append(out, notedStatus(name, n))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
