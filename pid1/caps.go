package pid1

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// rootCaps are the capabilities a root hinit uses (docs/image.md): to give
// the scandir and the control socket to the image's user, to work in its
// volume, to switch to it, and to signal its processes.
var rootCaps = []struct {
	bit  uint
	name string
}{
	{unix.CAP_CHOWN, "CHOWN"}, {unix.CAP_DAC_OVERRIDE, "DAC_OVERRIDE"}, {unix.CAP_FOWNER, "FOWNER"},
	{unix.CAP_KILL, "KILL"}, {unix.CAP_SETGID, "SETGID"}, {unix.CAP_SETUID, "SETUID"},
}

// missingCaps lists the rootCaps missing from the effective set of this
// process.
func missingCaps() ([]string, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return nil, fmt.Errorf("capget: %w", err)
	}
	var out []string
	for _, c := range rootCaps {
		if data[c.bit/32].Effective&(1<<(c.bit%32)) == 0 {
			out = append(out, c.name)
		}
	}
	return out, nil
}

// checkCaps says once, before the errors it causes, which capabilities a
// root hinit lacks (docker run --cap-drop ALL) and what to do about it.
func (h *hinit) checkCaps() {
	if !h.root {
		return
	}
	missing, err := missingCaps()
	if err != nil || len(missing) == 0 {
		return
	}
	h.log.Error(fmt.Sprintf("running as root without CAP_%s: what needs them fails below; add them back (--cap-add %s) or run as a non-root user (--user 10000:10000)",
		strings.Join(missing, ", CAP_"), strings.Join(missing, " --cap-add ")))
}

// fdsPerService is about what one running service holds open in hinit: its
// output pipe, its log file and dir, a notification pipe.
const fdsPerService = 4

// checkFileLimit says once, at boot, when the open files limit is below
// what the services hinit.yaml allows may hold: the scandir's services are
// the hermes user's to add, up to services_max, and their descriptors are
// hinit's, whose control socket, log files and starts then fail with
// "too many open files" (root's hsvc included).
func (h *hinit) checkFileLimit() {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	services := h.set.cfg.ServicesMax + len(h.set.cfg.Services)
	need := uint64(fdsPerService*services + 256)
	if lim.Cur >= need {
		return
	}
	h.log.Warn(fmt.Sprintf("the open files limit (%d) is below what %d services may hold in hinit (about %d): the hermes user's services could use up hinit's descriptors; raise it (docker run --ulimit nofile=%d) or lower services_max",
		lim.Cur, services, need, need))
}
