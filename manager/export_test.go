package manager

import (
	"os"

	"hinit/scandir"
)

// ApplyEvent applies one scandir event as the manager's watcher loop does,
// for a test to deliver an event as late as the loop may.
func ApplyEvent(m *Manager, ev scandir.Event) { m.dyn.apply(ev) }

// FailRemovals makes every removal of a scandir dir fail with err until
// the returned function is called.
func FailRemovals(err error) (restore func()) {
	removeAll = func(string) error { return err }
	return func() { removeAll = os.RemoveAll }
}
