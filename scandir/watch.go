package scandir

// watch makes sure the service dir name has its own watch, for service.yaml
// and down (with S6: every file of an s6 dir, and its log/ too).
func (w *Watcher) watch(name, path string) error {
	if w.in == nil {
		return nil // polling (Run): every rescan reads it
	}
	wd, err := w.in.add(path, serviceMask)
	if err != nil {
		return err
	}
	if stale, ok := w.dirs.set(name, wd); ok {
		w.in.rm(stale) // name is a different dir now; the old one was removed or moved
	}
	if w.S6 {
		w.watchLog(name, path)
	}
	return nil
}

// watchLog keeps a watch on the log/ of the service dir name, if it has
// one, for an s6 dir's log/run; with none (or a symlink), it drops any.
func (w *Watcher) watchLog(name, path string) {
	if w.in == nil {
		return
	}
	wd, err := w.in.add(path+"/log", serviceMask)
	if err != nil {
		w.unwatchLog(name)
		return
	}
	if stale, ok := w.logs.set(name, wd); ok {
		w.in.rm(stale)
	}
}

// unwatchLog drops the log/ watch of name, if any.
func (w *Watcher) unwatchLog(name string) {
	if wd, ok := w.logs.dropName(name); ok {
		w.in.rm(wd)
	}
}

// unwatch drops the watch of a name that is no longer a service dir. For a
// deleted dir the kernel has dropped it already and rm fails harmlessly; a
// dir moved out of the scandir must not keep reporting to us.
func (w *Watcher) unwatch(name string) {
	w.unwatchLog(name)
	if wd, ok := w.dirs.dropName(name); ok {
		w.in.rm(wd)
	}
}

// watches maps inotify watch descriptors to service dir names and back
// (the two maps mirror each other): one set for the service dirs, one for
// the log/ dirs of s6 dirs.
type watches struct {
	names map[int32]string // watch descriptor -> service dir name
	wds   map[string]int32 // service dir name -> watch descriptor
}

func newWatches() watches {
	return watches{names: map[int32]string{}, wds: map[string]int32{}}
}

// set records that wd watches name's dir. Adding a watch on an inode
// already watched returns its wd, which is how a dir renamed inside the
// scandir (old -> name) is followed: old is forgotten. When name had
// another wd (its dir was removed or moved) that one is forgotten and
// returned, for the caller to remove from the kernel.
func (m watches) set(name string, wd int32) (stale int32, ok bool) {
	if prev, had := m.wds[name]; had && prev != wd {
		delete(m.names, prev)
		stale, ok = prev, true
	}
	if old, had := m.names[wd]; had && old != name {
		delete(m.wds, old)
	}
	m.names[wd] = name
	m.wds[name] = wd
	return stale, ok
}

// dropName forgets name and returns its wd.
func (m watches) dropName(name string) (int32, bool) {
	wd, ok := m.wds[name]
	if ok {
		delete(m.names, wd)
		delete(m.wds, name)
	}
	return wd, ok
}

// dropWd forgets wd (the kernel dropped the watch: IN_IGNORED).
func (m watches) dropWd(wd int32) {
	if name, ok := m.names[wd]; ok {
		delete(m.wds, name)
		delete(m.names, wd)
	}
}
