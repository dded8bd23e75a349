package pid1

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"hinit/capset"
	"hinit/cgroup"
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
	eff, err := capset.Effective()
	if err != nil {
		return nil, fmt.Errorf("capget: %w", err)
	}
	var out []string
	for _, c := range rootCaps {
		if eff&(1<<c.bit) == 0 {
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

// checkTmpfs says once, at boot, which tmpfs the image's user may write
// (/run, /dev/shm, /tmp, the scandir's) may hold as much as the container's
// memory limit: their pages count against it, and once a user has filled
// one the kernel's OOM killer ends the largest process first, often hinit,
// and the container with it (exit 137, no shutdown, no log line).
func (h *hinit) checkTmpfs() {
	limit, ok := cgroup.MemoryLimit()
	if !ok {
		return
	}
	over := tmpfsOver(limit, "/run", "/dev/shm", "/tmp", h.set.scandir) // /run named before the scandir in it
	if len(over) == 0 {
		return
	}
	h.log.Warn(fmt.Sprintf("%s may hold as much as the container's memory limit (%s): what the hermes user writes there counts against it, and once it is full the kernel's OOM killer may end hinit, and the container with it; size them well below it (docker run --tmpfs /run:size=16m,nr_inodes=16k --shm-size 16m; see docs/image.md)",
		strings.Join(over, ", "), mebibytes(limit)))
}

// tmpfsOver names, with its size, each tmpfs among paths (one path per
// filesystem, the first given) that may hold limit bytes or more, or has
// no size (size=0). Its inodes are not judged: they take the kernel's
// memory too (empty dirs take no blocks), but a Kubernetes emptyDir's
// sizeLimit cannot bound them, and a warning at every boot that cannot be
// acted on is noise; docs/image.md says to bound them where one can.
func tmpfsOver(limit int64, paths ...string) []string {
	seen := map[uint64]bool{}
	var over []string
	for _, p := range paths {
		var st unix.Stat_t
		if p == "" || unix.Stat(p, &st) != nil || seen[st.Dev] {
			continue
		}
		seen[st.Dev] = true
		var fs unix.Statfs_t
		if unix.Statfs(p, &fs) != nil || fs.Type != unix.TMPFS_MAGIC {
			continue
		}
		switch size := int64(fs.Blocks) * fs.Bsize; {
		case fs.Blocks == 0:
			over = append(over, fmt.Sprintf("the tmpfs %s (no size limit)", p))
		case size >= limit:
			over = append(over, fmt.Sprintf("the tmpfs %s (%s)", p, mebibytes(size)))
		}
	}
	return over
}

// mebibytes is n bytes in MiB, for a log line.
func mebibytes(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
