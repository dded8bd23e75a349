package manager

import "hinit/scandir"

// ApplyEvent applies one scandir event as the manager's watcher loop does,
// for a test to deliver an event as late as the loop may.
func ApplyEvent(m *Manager, ev scandir.Event) { m.dyn.apply(ev) }
