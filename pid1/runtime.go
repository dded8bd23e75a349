package pid1

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// prepareRuntime (re)creates the runtime dir and the scandir empty (SPEC §2
// step 2): the state of a previous boot is wiped even when /run is not a
// tmpfs, since docker keeps the writable layer across docker restart. A
// read-only /run costs the scandir, the control socket and the environment
// dir, but not main or the static services: one error line says so.
func (h *hinit) prepareRuntime() {
	if err := emptyDir(h.set.runtimeDir, 0o755, -1, -1); err != nil {
		h.log.Error(fmt.Sprintf("runtime dir: %v; mount a tmpfs there (docker run --tmpfs /run) or set HINIT_RUNTIME_DIR", err))
		h.set.runtimeDir = ""
	}
	if err := emptyDir(h.set.scandir, 0o755, h.userUID(), h.userGID()); err != nil {
		h.log.Error(fmt.Sprintf("scandir: %v; dynamic services are off; mount a tmpfs there or set HINIT_SCANDIR", err))
		h.set.scandir = ""
	}
	if h.tty && h.set.runtimeDir != "" {
		// The terminal belongs to main: hinit's own lines go to a file.
		if f, err := os.OpenFile(filepath.Join(h.set.runtimeDir, "hinit.log"),
			os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o640); err == nil {
			h.logh.setOutput(f)
		}
	}
}

// emptyDir makes dir exist, empty, with mode perm and (when uid >= 0)
// owner uid:gid. It removes what is inside rather than dir itself, which
// may be a mount point.
func emptyDir(dir string, perm os.FileMode, uid, gid int) error {
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
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	if err := os.Chmod(dir, perm); err != nil {
		return err
	}
	if uid >= 0 {
		return os.Lchown(dir, uid, gid)
	}
	return nil
}
