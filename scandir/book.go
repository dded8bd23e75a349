package scandir

import (
	"hash/maphash"
	"maps"
	"slices"
)

// book is what the consumer has been told, and the services_max policy.
// Accepted names keep their slot while their dir exists; a freed slot goes to
// the first waiting name in sorted order. Refused entries are kept up to date
// silently, at most refusedMax of them: the hermes user can make any number
// of dirs, and each kept one costs PID 1 a watch, an entry and a status row.
// A name refused beyond that is not kept (unkept): the Watcher drops its
// watch, counts it, and it waits for the next rescan. Entries are kept
// without their YAML (Entry.kept): an Event that promotes a name the batch
// did not read carries an Entry whose YAML was dropped, and the Watcher
// reads that dir again before sending it.
type book struct {
	max      int
	accepted map[string]Entry // name -> Entry last sent
	refused  map[string]Entry // name -> latest Entry; the consumer was told Refused
	seed     maphash.Seed     // of every Entry.sum this book compares (random, per Watcher)
}

// refusedMax is how many refused names a book keeps: services_max, and at
// least minRefusedKept, so that a small services_max still lists them.
func (b *book) refusedMax() int { return max(b.max, minRefusedKept) }

const minRefusedKept = 16

func newBook(max int) *book {
	return &book{max: max, accepted: map[string]Entry{}, refused: map[string]Entry{}, seed: maphash.MakeSeed()}
}

// apply takes the current truth for some names (nil: nothing to run there)
// and returns the Events that bring the consumer up to date, removals first,
// the names refused for the first time (to be logged), and the names
// refused but not kept (refusedMax reached; nothing is sent for them).
func (b *book) apply(found map[string]*Entry) (evs []Event, newlyRefused, unkept []string) {
	var changed []Event
	var fresh []string
	for _, n := range slices.Sorted(maps.Keys(found)) {
		e := found[n]
		old, acc := b.accepted[n]
		_, ref := b.refused[n]
		switch {
		case e == nil && (acc || ref):
			delete(b.accepted, n)
			delete(b.refused, n)
			evs = append(evs, Event{Name: n})
		case e == nil:
		case acc && (old.dev != e.dev || old.ino != e.ino):
			// Another dir under the name (removed and made again, or
			// renamed over it, within one batch): the old one is gone,
			// as s6-svscan, which knows dirs by device and inode, sees
			// it; it keeps its slot for the new one.
			b.accepted[n] = e.kept()
			evs = append(evs, Event{Name: n, Replaced: true})
			changed = append(changed, Event{Name: n, Entry: copyEntry(*e)})
		case acc && !old.same(*e):
			b.accepted[n] = e.kept()
			changed = append(changed, Event{Name: n, Entry: copyEntry(*e)})
		case acc:
		case ref:
			b.refused[n] = e.kept()
		default:
			fresh = append(fresh, n)
		}
	}
	evs = append(evs, changed...)
	return b.fill(found, fresh, evs)
}

// fill gives free slots to waiting names in sorted order and refuses the
// fresh names left over, keeping at most refusedMax.
func (b *book) fill(found map[string]*Entry, fresh []string, evs []Event) (_ []Event, newlyRefused, unkept []string) {
	waiting := fresh
	if len(b.accepted) < b.max {
		waiting = slices.AppendSeq(slices.Clone(fresh), maps.Keys(b.refused))
		slices.Sort(waiting)
	}
	for _, n := range waiting {
		e, ok := b.refused[n]
		if f := found[n]; f != nil {
			e = *f // read in this batch: with its YAML
		}
		switch {
		case len(b.accepted) < b.max:
			delete(b.refused, n)
			b.accepted[n] = e.kept()
			evs = append(evs, Event{Name: n, Entry: copyEntry(e)})
		case !ok && len(b.refused) < b.refusedMax():
			b.refused[n] = e.kept()
			evs = append(evs, Event{Name: n, Refused: true})
			newlyRefused = append(newlyRefused, n)
		case !ok:
			unkept = append(unkept, n)
		}
	}
	return evs, newlyRefused, unkept
}

// copyEntry gives the consumer its own Entry; YAML stays shared, read-only.
func copyEntry(e Entry) *Entry { return &e }
