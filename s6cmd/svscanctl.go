package s6cmd

import (
	"errors"

	"hinit/control"
)

const svscanctlSynopsis = "[ -zabhitqnN ] svscandir"

// runSvscanctl is s6-svscanctl. hinit reads its scandir by itself on every
// change; -a, -n, -N, -h and -z return once it has caught up with the
// changes made before the call (Watcher.Sync); -t, -q, -i and -b stop
// the container, which only root may do. Either way DIR must be the scandir
// hinit watches, told by device and inode (hinit compares them with the
// dir its watcher watches); any other dir has no supervisor, as with s6.
func runSvscanctl(e *env, args []string) int {
	opts, rest, ok := getopt(args, "zabhitqnN", "")
	if !ok || len(rest) != 1 {
		return e.usage(svscanctlSynopsis)
	}
	dir := rest[0]
	id, err := dirID(dir)
	if err != nil {
		return e.fatal(exitSystem, "unable to control %s: %s", dir, errText(err))
	}
	req := &control.Request{Verb: control.VerbList, Scandir: id} // who may reach hinit may rescan
	for _, o := range opts {
		switch o.c {
		case 't', 'q', 'i', 'b':
			req = &control.Request{Verb: control.VerbShutdown, Scandir: id}
		}
	}
	resp, err := e.call(req)
	switch {
	case errors.Is(err, errNoSupervisor):
		return e.fatal(exitUsage, "unable to control %s: supervisor not listening", dir)
	case err != nil:
		return e.fatal(exitSystem, "unable to control %s: %s", dir, errText(err))
	case !resp.OK:
		return e.fatal(exitSystem, "unable to control %s: %s", dir, resp.Error)
	}
	return exitOK
}
