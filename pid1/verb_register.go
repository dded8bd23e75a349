package pid1

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"hinit/control"
	"hinit/reconcile"
	"hinit/supervise"
)

// register publishes a template instance into the scandir as the image's
// user, the same way the boot reconcile does, and waits until hinit
// supervises it.
func (h *hinit) register(ctx context.Context, c control.Caller, req *control.Request) *control.Response {
	if h.set.scandir == "" {
		return control.Errorf(control.CodeFailed, "dynamic services are off (no writable scandir); see hinit's log")
	}
	if _, ok := h.set.cfg.Templates[req.Template]; !ok {
		return control.Errorf(control.CodeUsage, "no template %q in %s", req.Template, or(h.set.cfg.File, DefaultConfig))
	}
	name := req.Template + "-" + req.Instance
	if h.group.Get(name) != nil {
		return control.Errorf(control.CodeFailed, "%s is already registered", name)
	}
	err := h.asUser(func() error {
		return reconcile.Publish(h.set.scandir, req.Template, req.Instance, req.Down, req.Env)
	})
	if err != nil {
		return control.Errorf(control.CodeFailed, "register %s: %v", name, err)
	}
	if resp := h.waitMember(ctx, name, true); resp != nil {
		return resp
	}
	resp := control.OK()
	resp.Names = []string{name}
	return resp
}

// unregister stops a dynamic service (writing its planned-stop marker),
// waits until it is down, then removes its dir.
func (h *hinit) unregister(ctx context.Context, s *supervise.Service, req *control.Request) *control.Response {
	st := s.Status()
	if st.Source == "static" {
		return control.Errorf(control.CodeFailed, "%s is a static service of hinit.yaml; stop it instead (hsvc stop %s)", st.Name, st.Name)
	}
	h.recordDesired(s, control.VerbStop)
	s.Stop(true)
	if resp := h.waitUntil(ctx, s, control.UntilDown, req); !resp.OK {
		return resp
	}
	dir := filepath.Join(h.set.scandir, st.Name)
	if err := h.asUser(func() error { return os.RemoveAll(dir) }); err != nil {
		return control.Errorf(control.CodeFailed, "remove %s: %v", dir, err)
	}
	if resp := h.waitMember(ctx, st.Name, false); resp != nil {
		return resp
	}
	return control.OK()
}

// unregisterNoted removes the scandir dir of name, which is not a service
// (its service.yaml is broken or refused), with the image user's rights.
func (h *hinit) unregisterNoted(name string) *control.Response {
	dir := filepath.Join(h.set.scandir, name)
	if err := h.asUser(func() error { return os.RemoveAll(dir) }); err != nil {
		return control.Errorf(control.CodeFailed, "remove %s: %v", dir, err)
	}
	return control.OK()
}

// waitMember waits until the scandir watcher has added (or removed) name.
func (h *hinit) waitMember(ctx context.Context, name string, present bool) *control.Response {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		changed := h.group.Watch()
		if (h.group.Get(name) != nil) == present {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return control.Errorf(control.CodeTimeout, "hinit did not pick up %s; see hinit's log", name)
		}
	}
}
