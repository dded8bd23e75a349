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
