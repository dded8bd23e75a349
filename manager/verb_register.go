package manager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"hinit/asuser"
	"hinit/config"
	"hinit/control"
	"hinit/reconcile"
	"hinit/supervise"
	"hinit/svcname"
)

// register publishes a template instance into the scandir as the image's
// user, the same way the boot reconcile does, and waits until hinit
// supervises it, or notes why it does not (a definition that does not
// render, services_max reached): that reason is the answer. When the
// scandir is known to be full it publishes nothing.
func (m *Manager) register(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	if m.scandir == "" {
		return control.Errorf(control.CodeFailed, "dynamic services are off (no writable scandir); see hinit's log")
	}
	if m.stopping.Load() { // as a start then: nothing new starts or is recorded
		return control.Errorf(control.CodeFailed, "register %s: %v", svcname.Join(req.Template, req.Instance), supervise.ErrShuttingDown)
	}
	if _, ok := m.cfg.Templates[req.Template]; !ok {
		return control.Errorf(control.CodeUsage, "no template %q in %s", req.Template, m.configName())
	}
	name := svcname.Join(req.Template, req.Instance)
	if err := m.watchStopped(); err != nil { // a dir published now would never be read
		return control.Errorf(control.CodeFailed, "register %s: hinit no longer reads the scandir (%v); restart the container", name, err)
	}
	if m.group.Get(name) != nil {
		return control.Errorf(control.CodeFailed, "%s is already registered", name)
	}
	if stuck, ok := m.dyn.leavingState(name); ok {
		// Its old dir is still there, or its removal is not over: a new
		// dir now would be taken for the old one and never supervised.
		if stuck {
			return control.Errorf(control.CodeFailed, "%s was unregistered but its dir could not be removed (hsvc status %s); hsvc unregister %s removes it", name, name, name)
		}
		return control.Errorf(control.CodeFailed, "%s is still being unregistered: its process is stopping or its dir being removed (hsvc unregister %s --wait waits for that)", name, name)
	}
	if n := m.dyn.occupied(); n >= m.cfg.ServicesMax {
		// The watcher would refuse the dir and keep it, to start it when
		// a slot frees: a failed register must leave nothing behind.
		return control.Errorf(control.CodeFailed, "%s is not registered: %d dynamic services already (services_max %d); hsvc unregister one first", name, n, m.cfg.ServicesMax)
	}
	noted, _ := m.dyn.noteWatch() // a note set after this is about the dir published here
	slot := reconcile.Slot{Template: req.Template, Instance: req.Instance, Down: req.Down, Env: req.Env}
	var drain time.Duration
	// One register of another user's at a time: each reads and parses its
	// profile's config.yaml in a turn of asuser.Do, as slow as that user
	// makes it, and the user may ask for any number (a file planted at
	// the name fails each at once, to be asked again), which took every
	// turn, root's records of gateways waiting behind them.
	if err := ctx.Err(); err != nil {
		return control.Errorf(control.CodeFailed, "register %s: %v", name, err)
	}
	err := func() error {
		if !c.Root {
			select {
			case m.registering <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			defer func() { <-m.registering }()
		}
		return m.asUserCtx(ctx, func() error {
			slot.StopTimeout, drain = m.gatewayStopTimeout(req)
			return publishSlot(m.scandir, slot)
		})
	}()
	if errors.Is(err, reconcile.ErrExists) && m.group.Get(name) != nil {
		return control.Errorf(control.CodeFailed, "%s is already registered", name) // by a register beside this one
	}
	if errors.Is(err, reconcile.ErrExists) {
		// Not a service (checked above): a dir the watcher has not
		// read yet, or could not (no descriptor left), or refused.
		return control.Errorf(control.CodeFailed, "register %s: its dir is in the scandir already, but hinit does not supervise it (not read yet, or refused: see hsvc status and hinit's log)", name)
	}
	if err != nil {
		return control.Errorf(control.CodeFailed, "register %s: %v", name, err)
	}
	slotPublished(ctx)
	m.logSlot(reconcile.Action{Profile: req.Instance, StopTimeout: slot.StopTimeout, Drain: drain})
	published, _ := os.Lstat(filepath.Join(m.scandir, name))
	settling := m.dyn.settle(name) // a slot held until the watcher adds or refuses it
	// Published: it is started once the watcher reads it, whether its
	// client still waits or not, and however long the watcher takes (a
	// scandir full of large definitions to read). So what a register
	// leaves is settled in a goroutine of its own, for as long as the
	// manager lives: the gateway recorded "running", or the refused dir
	// removed, or the next boot would undo what this one runs. The client
	// gets its answer within registerWait: that outcome, or that the dir
	// is published and starts once hinit reads it. Before, a register
	// that timed out recorded nothing, and the next boot lost its gateway.
	settled := make(chan *control.Response) // unbuffered: a send is an answer taken
	late := make(chan struct{})             // closed once the handler has answered without it
	go func() {
		resp := m.settleRegister(name, noted, published, req.Down)
		settling()
		select {
		case settled <- resp:
		case <-late:
			if !resp.OK { // nobody else hears of it
				m.log.Error("register, settled after its answer: "+resp.Error, "svc", name)
			}
		}
	}()
	t := time.NewTimer(registerWait)
	defer t.Stop()
	select {
	case resp := <-settled:
		return resp
	case <-t.C:
	case <-ctx.Done(): // its client left: nobody to answer
	}
	close(late)
	then := "it starts once hinit reads it"
	if req.Down {
		then = "it is registered, down, once hinit reads it"
	}
	return control.Errorf(control.CodeTimeout, "register %s: its dir is published, but hinit has not read it yet (the scandir is busy); %s, and hinit's log says why if it is not", name, then)
}

// registerWait is how long a register waits for the watcher before it
// answers (QuickAnswer); a test shortens it.
var registerWait = control.QuickAnswer

// settleRegister finishes a register whose dir is published (name;
// published is the dir as it was then): it waits, for as long as the
// manager lives, until the watcher has added the service, then records a
// gateway started "running", as a start does; or until the watcher has
// noted why not since the note numbered noted, then removes the dir if it
// is still the one published: refused or broken, the watcher would keep
// it and start it once a slot frees or the template renders, and a failed
// register leaves nothing behind. The answer is the register's.
func (m *Manager) settleRegister(name string, noted uint64, published os.FileInfo, down bool) *control.Response {
	why, err := m.waitAdded(m.life, name, noted, published)
	if err != nil { // nothing will add it any more
		return control.Errorf(control.CodeFailed, "register %s: %v before hinit read its dir", name, supervise.ErrShuttingDown)
	}
	// The record and the removal are done whoever still waits for them
	// (context.Background): the dir is published either way.
	if why != "" {
		if fi, err := os.Lstat(filepath.Join(m.scandir, name)); err == nil && published != nil && os.SameFile(fi, published) {
			if err := m.removeSlot(context.Background(), name, false); err != nil {
				m.log.Error("register: refused dir not removed", "svc", name, "err", err)
			}
		}
		return control.Errorf(control.CodeFailed, "%s is not registered: %s", name, why)
	}
	if s := m.group.Get(name); s != nil && !down {
		// A start: hermes' gateway start of a profile without a slot,
		// unless a stop came first.
		var rec error
		func() {
			defer m.lockRequest(name)() // given back on a panic too
			if m.group.Get(name) == s && s.Status().Want == supervise.WantUp {
				rec = m.recordDesired(context.Background(), s, control.VerbStart, false)
			}
		}()
		if rec != nil {
			return unrecordedAnswer("register", []string{name + ": " + rec.Error()})
		}
	}
	resp := control.OK()
	resp.Names = []string{name}
	return resp
}

// gatewayStopTimeout is the stop timeout of a gateway instance registered
// at run time, as the boot reconcile gives it (reconcile.SlotStopTimeout):
// hermes' stop budget for its profile's drains, from the container
// environment of now with the instance's own env over it, and the drain
// asked for (reconcile.SlotStopTimeout). 0 (the template's) for any other
// template or when no reconcile is configured (no $HERMES_HOME to read).
// Run it as the image's user.
func (m *Manager) gatewayStopTimeout(req *control.Request) (stop, asked time.Duration) {
	if m.gw.rc == nil || req.Template != m.gw.template() {
		return 0, 0
	}
	env := maps.Clone(m.environ()) // never the caller's map
	maps.Copy(env, req.Env)
	stop, asked, err := reconcile.SlotStopTimeout(m.gw.home().ProfileDir(req.Instance), env)
	if err != nil {
		m.log.Warn("register: "+err.Error(), "profile", req.Instance)
	}
	return stop, asked
}

// unregister stops a dynamic service (writing its planned-stop marker),
// forgets it at once, and removes its dir once its process is gone (SIGKILL
// at its stop timeout included). Without a wait it answers as soon as the
// stop is asked for; with one it answers when the dir is gone or the wait
// runs out, the removal going on either way.
func (m *Manager) unregister(ctx context.Context, c control.Caller, s *supervise.Service, req *control.Request) *control.Response {
	st := s.Status()
	if st.Source == config.SourceStatic {
		return control.Errorf(control.CodeFailed, "%s is a static service of hinit.yaml; stop it instead (hsvc stop %s)", st.Name, st.Name)
	}
	rec, err := m.applyDesired(ctx, s, control.VerbStop, false, func() error {
		if err := s.Stop(true); err != nil {
			return err
		}
		m.dyn.leave(st.Name)
		m.group.Remove(st.Name, true)
		return nil
	})
	if errors.Is(err, errUnregistered) { // by another unregister: wait as for one under way
		return m.unregisterAny(ctx, c, req)
	}
	if err != nil {
		return control.Errorf(control.CodeFailed, "unregister %s: %v", st.Name, err)
	}
	var unrecorded []string
	if rec != nil {
		unrecorded = []string{st.Name + ": " + rec.Error()}
	}
	done := make(chan *control.Response, 1)
	go func() { done <- m.removeWhenGone(s, c.Root) }()
	wait, _ := req.Timeout()
	if wait == 0 {
		return unrecordedAnswer("unregister", unrecorded)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case resp := <-done:
		if !resp.OK {
			return resp
		}
		return unrecordedAnswer("unregister", unrecorded)
	case <-t.C:
		return control.Errorf(control.CodeTimeout, "timed out after %v waiting for %s to stop (it is %s); its dir is removed once it has stopped",
			wait, st.Name, s.Status().State)
	case <-ctx.Done():
		return control.Errorf(control.CodeFailed, "unregister %s: %v", st.Name, ctx.Err())
	}
}

// unregisterAny unregisters a service, or removes a scandir entry that is
// none (its definition is broken or refused, or the watcher ignores it: a
// symlink, a file), which the watcher then forgets.
func (m *Manager) unregisterAny(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	name := req.Names[0]
	if m.group.Get(name) == nil {
		if done := m.dyn.leaveDone(name); done != nil { // leave comes before the removal from the group
			if wait, _ := req.Timeout(); wait == 0 {
				return control.OK() // as the first unregister answered
			}
			return m.awaitLeft(ctx, name, done, req)
		}
		if m.dyn.why(name) != "" {
			if err := m.removeSlot(ctx, name, c.Root); err != nil {
				return control.Errorf(control.CodeFailed, "unregister %s: %v", name, err)
			}
			return control.OK()
		}
	}
	return m.onOne(m.unregister)(ctx, c, req)
}

// awaitLeft waits for the end of the unregister under way of name (done is
// closed then), within req's timeout (0: none), for a second unregister
// --wait (hermes retrying after a timeout) or a wait --down: they see the
// same end as the first unregister --wait would have.
func (m *Manager) awaitLeft(ctx context.Context, name string, done <-chan struct{}, req *control.Request) *control.Response {
	var timeout <-chan time.Time
	if wait, _ := req.Timeout(); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	leftWaitBegins(name)
	select {
	case <-done:
		if stuck, _ := m.dyn.leavingState(name); stuck {
			return control.Errorf(control.CodeFailed, "unregister %s: %s", name, m.dyn.why(name))
		}
		return control.OK()
	case <-timeout:
		wait, _ := req.Timeout()
		return control.Errorf(control.CodeTimeout, "timed out after %v waiting for %s to stop; it is being unregistered, and its dir is removed once it has stopped", wait, name)
	case <-ctx.Done():
		return control.Errorf(control.CodeFailed, "%s %s: %v", req.Verb, name, ctx.Err())
	}
}

// slotPublished is called once a register has published its slot, with
// the request's context; a test holds it there until its client leaves.
var slotPublished = func(context.Context) {}

// leftWaitBegins is called as awaitLeft begins to wait; a test counts.
var leftWaitBegins = func(string) {}

// removeWhenGone removes the dir of a service being unregistered once its
// process is gone.
func (m *Manager) removeWhenGone(s *supervise.Service, root bool) *control.Response {
	<-s.Done()
	err := m.removeSlot(context.Background(), s.Name(), root)
	m.dyn.left(s.Name(), err)
	if err != nil {
		m.log.Error("unregister: service dir not removed", "svc", s.Name(), "err", err)
		return control.Errorf(control.CodeFailed, "unregister %s: %v", s.Name(), err)
	}
	return control.OK()
}

// publishSlot publishes a registered slot (reconcile.PublishSlot); a test
// holds it.
var publishSlot = reconcile.PublishSlot

// removeAll removes name in the scandir dir d and all under it, never through
// a symlink, with no descriptor per level of a tree the hermes user made
// as deep as it likes (asuser.RemoveAllAt); a test makes it fail.
var removeAll = asuser.RemoveAllAt

// removeSlot removes the scandir dir name with the rights of whoever may:
// root's for a dir root owns when root asked, the image user's otherwise
// (a scandir write never yields root). Everything is done relative to the
// scandir hinit watches (scandir.Watcher.OpenDir), never through its
// path: the image user may have put a symlink to any tree there, and
// root would remove that tree's root-owned NAME. removeAll never follows
// a symlink: a link in place of the dir is removed, not what it points
// to.
func (m *Manager) removeSlot(ctx context.Context, name string, root bool) error {
	dir := filepath.Join(m.scandir, name)
	w := m.watcher.Load()
	if w == nil {
		return fmt.Errorf("remove %s: the scandir is not watched", dir)
	}
	d, err := w.OpenDir()
	if err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	defer d.Close()
	var st unix.Stat_t
	err = unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	remove := func() error { return removeAll(d, name) } // its errors name the path
	if st.Uid == 0 && root {
		return remove()
	}
	// One removal as the user at a time: each may hold a turn of
	// asuser.Do for its whole budget (a tree its owner grows under it),
	// and the user may ask for any number, which took every turn. A
	// request whose client left meanwhile removes nothing: it was told
	// that it failed.
	select {
	case m.removing <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("remove %s: %w", dir, ctx.Err())
	}
	defer func() { <-m.removing }()
	return m.asUserCtx(ctx, remove)
}

// watcherGone is why a register waiting for the watcher ends when the
// watcher stopped for good (err).
func watcherGone(err error) string {
	return fmt.Sprintf("hinit stopped reading the scandir before it read its dir (%v); restart the container", err)
}

// waitAdded waits until the scandir watcher has added name, or has noted
// why not since the note numbered noted, or the dir published (as Lstat
// saw it then) is no longer there (why), or ctx ends (err). A dir gone or
// replaced before the watcher read it is never added (its event is no
// longer current, scandir.Entry.Current): without that look, a register
// whose dir the user removed meanwhile waited for as long as hinit runs.
// The look is taken at each change of the group or the notes: a dir
// removed before the watcher listed it makes no event of its own, and its
// wait ends at the next one (a waiting register holds a slot meanwhile,
// dynamic.settle, so that at most services_max wait).
func (m *Manager) waitAdded(ctx context.Context, name string, noted uint64, published os.FileInfo) (why string, err error) {
	dir := filepath.Join(m.scandir, name)
	for {
		changed := m.group.Watch()
		_, notes := m.dyn.noteWatch()
		if m.group.Get(name) != nil {
			return "", nil
		}
		if why := m.dyn.notedSince(name, noted); why != "" {
			return why, nil
		}
		if fi, err := os.Lstat(dir); err != nil || published == nil || !os.SameFile(fi, published) {
			// The scandir itself moved away takes its dirs with it, and
			// ends the watcher, which may not have noticed yet.
			select {
			case <-m.watchDown:
				return watcherGone(m.watchErr), nil
			default:
			}
			if _, err := os.Lstat(m.scandir); errors.Is(err, os.ErrNotExist) {
				return watcherGone(fmt.Errorf("%s was moved or removed", m.scandir)), nil
			}
			return "its dir was removed or replaced meanwhile", nil
		}
		select {
		case <-changed:
		case <-notes:
		case <-m.watchDown:
			return watcherGone(m.watchErr), nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
