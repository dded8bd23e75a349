package scandir

import "fmt"

// noteIgnored brings the ignored names up to date with why (name -> why it
// is ignored, "" when it is not). It returns the Events that clear names no
// longer ignored and those that report a name newly ignored, or ignored for
// a new reason; each such name is logged once per reason.
//
// The hermes user can make any number of entries, so at most max ignored
// names are kept and reported (services_max, the bound on dirs); the others
// are neither kept nor logged one by one: a rescan counts them and logs the
// count (sayOver), and between rescans the first one is logged. A row freed
// by a name that is no longer ignored goes to a waiting one at the next
// rescan.
func (w *Watcher) noteIgnored(names []string, why map[string]string) (cleared, ignored []Event) {
	for _, n := range names {
		old, had := w.ignored[n]
		r := why[n]
		switch {
		case r == old:
		case r == "":
			delete(w.ignored, n)
			cleared = append(cleared, Event{Name: n})
		case had || len(w.ignored) < w.max:
			w.ignored[n] = r
			w.log.Warn("scandir: ignoring entry: "+r, "svc", n)
			ignored = append(ignored, Event{Name: n, Ignored: r})
		default:
			w.over++
			if !w.overSaid {
				w.overSaid = true
				w.log.Warn(fmt.Sprintf("scandir: ignoring entry, not listed in status: more than %d entries are ignored (services_max); "+
					"the others are counted at the next rescan", w.max), "svc", n, "why", r)
			}
		}
	}
	return cleared, ignored
}

// sayOver logs, after a rescan, how many ignored entries are not listed,
// when that changed.
func (w *Watcher) sayOver() {
	if w.over == w.overLogged {
		return
	}
	w.overLogged = w.over
	if w.over > 0 {
		w.log.Warn(fmt.Sprintf("scandir: %d more entries (refused, ignored or without a service.yaml) are neither watched nor listed in status "+
			"(services_max: %d); each rescan looks at them again", w.over, w.max))
	}
}
