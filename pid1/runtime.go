package pid1

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"hinit/asuser"
)

// prepareRuntime (re)creates the runtime dir and the scandir empty (SPEC §2
// step 2): the state of a previous boot is wiped even when /run is not a
// tmpfs, since docker keeps the writable layer across docker restart. A
// read-only /run costs the scandir, the control socket and the environment
// dir, but not main or the static services: one error line says so.
func (h *hinit) prepareRuntime() {
	owner := -1 // a root hinit makes its runtime dir root's again
	if h.root {
		owner = 0
	}
	prev := readPreviousLog(h.set.runtimeDir)
	if err := emptyDir(h.set.runtimeDir, 0o755, owner, owner, nil); err != nil {
		h.log.Error(fmt.Sprintf("runtime dir: %v; mount a tmpfs there (docker run --tmpfs /run) or set HINIT_RUNTIME_DIR", err))
		h.set.runtimeDir = ""
	} else if prev != nil {
		gid := -1
		if h.root {
			gid = h.userGID()
		}
		if h.prevLog, err = keepPreviousLog(h.set.runtimeDir, prev, gid); err != nil {
			h.log.Warn(fmt.Sprintf("the last boot's hinit.log not kept: %v", err))
		}
	}
	if err := emptyDir(h.set.scandir, 0o755, h.userUID(), h.userGID(), h.asUser); err != nil {
		h.log.Error(fmt.Sprintf("scandir: %v; dynamic services are off; mount a tmpfs there or set HINIT_SCANDIR", err))
		h.set.scandir = ""
	}
	if h.tty && h.set.runtimeDir != "" {
		// The terminal belongs to main: hinit's own lines, and what boot
		// hooks print, go to a file, readable by the control group (the
		// hermes user in that session) and no one else.
		if f, err := os.OpenFile(filepath.Join(h.set.runtimeDir, "hinit.log"),
			os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o640); err == nil {
			if gid := h.userGID(); h.root && gid >= 0 {
				if err := f.Chown(0, gid); err != nil {
					h.log.Warn(fmt.Sprintf("hinit.log: %v; only root may read it", err))
				}
			}
			h.logh.setOutput(&ttyLog{f: f, path: f.Name()})
			h.ttyLog = f
		}
	}
}

// emptyDir makes dir exist, empty, with mode perm and (when uid >= 0)
// owner uid:gid. It removes what is inside rather than dir itself, which
// may be a mount point. What root may not remove (a root without
// CAP_DAC_OVERRIDE, after docker restart kept the scandir the hermes user
// filled) is removed again through as, with the rights of its owner. Mode
// and owner are only set when they differ, so that a root without
// CAP_FOWNER or CAP_CHOWN gets through a boot where nothing needs changing.
func emptyDir(dir string, perm os.FileMode, uid, gid int, as func(func() error) error) error {
	// The scandir is its user's, in /run, which is sticky (mode 1777) and
	// kept by docker restart: its owner may rename it away and leave a
	// symlink or a file at its path. That entry goes (unlink follows
	// nothing), or the scandir would be off at every boot.
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		if err := os.Remove(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	// After a docker restart without a tmpfs, the scandir holds whatever
	// the hermes user left there: any number of entries, trees of any
	// depth, symlinks (asuser.RemoveContents holds neither the listing nor
	// a descriptor per level, and follows no link).
	if err := asuser.RemoveContents(dir); err != nil {
		if as == nil || !(errors.Is(err, os.ErrPermission)) {
			return err
		}
		if err := as(func() error { return asuser.RemoveContents(dir) }); err != nil {
			return err
		}
	}
	if fi.Mode().Perm() != perm {
		if err := os.Chmod(dir, perm); err != nil {
			return err
		}
	}
	st := fi.Sys().(*syscall.Stat_t)
	if uid >= 0 && (int(st.Uid) != uid || int(st.Gid) != gid) {
		return os.Lchown(dir, uid, gid)
	}
	return nil
}
