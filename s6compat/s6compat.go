// Package s6compat makes hinit, as PID 1 with `compat: s6-overlay`, look
// like s6-overlay to the programs that probe for it (SPEC §8): today's
// hermes decides it is supervised by s6 when /proc/1/comm reads s6-svscan
// and /run/s6/basedir is a dir. It changes names only: hinit --version and
// hsvc still say what runs.
package s6compat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Comm is the command name hinit takes as PID 1 in compat mode.
const Comm = "s6-svscan"

// DefaultRoot is s6-overlay's runtime dir.
const DefaultRoot = "/run/s6"

// Enter renames every thread of the process to Comm (new threads inherit
// the name of the thread that makes them) and (re)creates root (/run/s6)
// with basedir/ and container_environment, a symlink to envDir (hinit's
// environment dir, what with-contenv reads). root is removed first without
// following anything in it, so nothing a user left there from a previous
// boot is trusted.
func Enter(root, envDir string) error {
	if err := rename(Comm); err != nil {
		return err
	}
	// Not there, nothing to clear (a read-only /run says EROFS to an
	// unlink of a name that is not there, and the error named it).
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		if err := os.RemoveAll(root); err != nil {
			return fmt.Errorf("s6 compat: clear %s: %w", root, err)
		}
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		return fmt.Errorf("s6 compat: %w", err)
	}
	if err := os.Mkdir(filepath.Join(root, "basedir"), 0o755); err != nil {
		return fmt.Errorf("s6 compat: %w", err)
	}
	if envDir == "" {
		return nil
	}
	if err := os.Symlink(envDir, filepath.Join(root, "container_environment")); err != nil {
		return fmt.Errorf("s6 compat: %w", err)
	}
	return nil
}

// rename writes name as the comm of every thread of the process; the
// thread-group leader's is what /proc/PID/comm shows.
func rename(name string) error {
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("s6 compat: list threads: %w", err)
	}
	for _, t := range tids {
		err := os.WriteFile(filepath.Join("/proc/self/task", t.Name(), "comm"), []byte(name), 0)
		if err != nil && !os.IsNotExist(err) { // a thread may end meanwhile
			return fmt.Errorf("s6 compat: rename thread %s: %w", t.Name(), err)
		}
	}
	return nil
}
