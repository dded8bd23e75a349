package scandir

// watch makes sure the service dir name has its own watch, for service.yaml
// and down. Adding a watch on an inode already watched returns its wd, which
// is how a dir renamed inside the scandir (old -> name) is followed.
func (w *Watcher) watch(name, path string) error {
	wd, err := w.in.add(path, serviceMask)
	if err != nil {
		return err
	}
	if prev, ok := w.watched[name]; ok && prev != wd {
		// name is a different dir now; the old one was removed or moved.
		w.in.rm(prev)
		delete(w.wds, prev)
	}
	if old, ok := w.wds[wd]; ok && old != name {
		delete(w.watched, old)
	}
	w.wds[wd] = name
	w.watched[name] = wd
	return nil
}

// unwatch drops the watch of a name that is no longer a service dir. For a
// deleted dir the kernel has dropped it already and rm fails harmlessly; a
// dir moved out of the scandir must not keep reporting to us.
func (w *Watcher) unwatch(name string) {
	wd, ok := w.watched[name]
	if !ok {
		return
	}
	w.in.rm(wd)
	delete(w.wds, wd)
	delete(w.watched, name)
}
