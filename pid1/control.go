package pid1

import (
	"context"
	"fmt"
	"path/filepath"

	"hinit/control"
)

// listenControl opens the control socket (SPEC §4) for root and the group
// of the image's user, in the background while the boot goes on; serve
// waits for it and starts answering with the service manager. Requests are
// only answered once the services exist, and before main starts, so main
// can call hsvc at once.
func (h *hinit) listenControl() (serve func(context.Context)) {
	if h.set.runtimeDir == "" {
		return func(context.Context) {}
	}
	gid := h.userGID()
	path := filepath.Join(h.set.runtimeDir, control.SocketName)
	ready := make(chan *control.Listener, 1)
	go func() {
		ln, err := control.Listen(path, gid)
		if err != nil {
			h.log.Error(fmt.Sprintf("control socket: %v; hsvc will not reach hinit", err))
		}
		ready <- ln
	}()
	return func(ctx context.Context) {
		if ln := <-ready; ln != nil {
			go control.Serve(ctx, ln, h.mgr, h.serveGID(gid), h.log)
		}
	}
}
