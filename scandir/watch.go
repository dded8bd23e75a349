package scandir

// watch makes sure the service dir name has its own watch, for service.yaml
// and down (with S6: every file of an s6 dir, and its log/ too). Adding a watch on an inode already watched returns its wd, which
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
	if w.S6 {
		w.watchLog(name, path)
	}
	return nil
}

// watchLog keeps a watch on the log/ of the service dir name, if it has
// one, for an s6 dir's log/run; with none (or a symlink), it drops any.
func (w *Watcher) watchLog(name, path string) {
	wd, err := w.in.add(path+"/log", serviceMask)
	if err != nil {
		w.unwatchLog(name)
		return
	}
	if prev, ok := w.logOf[name]; ok && prev != wd {
		w.in.rm(prev)
		delete(w.logWds, prev)
	}
	if old, ok := w.logWds[wd]; ok && old != name {
		delete(w.logOf, old)
	}
	w.logWds[wd] = name
	w.logOf[name] = wd
}

// unwatchLog drops the log/ watch of name, if any.
func (w *Watcher) unwatchLog(name string) {
	if wd, ok := w.logOf[name]; ok {
		w.in.rm(wd)
		delete(w.logWds, wd)
		delete(w.logOf, name)
	}
}

// unwatch drops the watch of a name that is no longer a service dir. For a
// deleted dir the kernel has dropped it already and rm fails harmlessly; a
// dir moved out of the scandir must not keep reporting to us.
func (w *Watcher) unwatch(name string) {
	w.unwatchLog(name)
	wd, ok := w.watched[name]
	if !ok {
		return
	}
	w.in.rm(wd)
	delete(w.wds, wd)
	delete(w.watched, name)
}
