package reconcile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"hinit/config"
	"hinit/s6dir"
	"hinit/svcname"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"
)

// ref is the service.yaml of a template instance (config.Ref on disk).
type ref struct {
	Template    string            `yaml:"template"`
	Instance    string            `yaml:"instance"`
	Env         map[string]string `yaml:"env,omitempty"`
	StopTimeout string            `yaml:"stop_timeout,omitempty"`
}

// Slot is one scandir slot to publish: the service <Template>-<Instance>.
type Slot struct {
	Template, Instance string
	Down               bool              // registered down: a `down` file
	Env                map[string]string // extra environment of the instance
	StopTimeout        time.Duration     // above the template's: replaces it (config.Ref.StopTimeout)
}

// Publish registers the service <template>-<instance> in scandir: it builds
// a dot-named temporary dir (the watcher ignores dot names) holding
// service.yaml = {template, instance, env} and, when down is set, a `down`
// file, then renames it into place with one rename(2), so the watcher sees
// a complete slot or none. An existing slot is left untouched and reported
// as ErrExists. The temporary name is unique, so concurrent publishers of
// the same name cannot mix their files: one wins, the other gets ErrExists.
func Publish(scandir, template, instance string, down bool, env map[string]string) error {
	return PublishSlot(scandir, Slot{Template: template, Instance: instance, Down: down, Env: env})
}

// PublishSlot is Publish with every field of a slot.
func PublishSlot(scandir string, s Slot) error {
	name := svcname.Join(s.Template, s.Instance)
	if err := checkRef(s.Template, s.Instance, s.Env); err != nil {
		return fmt.Errorf("publish %s: %w", name, err)
	}
	if s.StopTimeout < 0 || s.StopTimeout > config.MaxRefStopTimeout {
		return fmt.Errorf("publish %s: %w: stop timeout %v", name, ErrInvalid, s.StopTimeout)
	}
	r := ref{Template: s.Template, Instance: s.Instance, Env: s.Env}
	if s.StopTimeout > 0 {
		r.StopTimeout = s.StopTimeout.String()
	}
	data, err := yaml.Marshal(r)
	if err != nil {
		return fmt.Errorf("publish %s: %w", name, err)
	}
	down := s.Down
	tmp, err := os.MkdirTemp(scandir, tempPattern(name))
	if err != nil {
		return fmt.Errorf("publish %s: %w", name, err)
	}
	err = fillSlot(tmp, data, down)
	if err == nil {
		err = renameNoReplace(tmp, filepath.Join(scandir, name))
	}
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("publish %s: %w", name, err)
	}
	return nil
}

// checkRef refuses what config would refuse when the slot is read back.
func checkRef(template, instance string, env map[string]string) error {
	if err := svcname.CheckInstance(template, instance); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for k, v := range env {
		if err := svcname.CheckEnvVar(k, v); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	return nil
}

// tempPattern names the build dir after the slot when that fits a file
// name, so a leftover is recognisable in `ls -a`.
func tempPattern(name string) string {
	p := "." + name + ".tmp-"
	if len(p)+10 > 255 { // MkdirTemp appends up to 10 digits
		return ".tmp-"
	}
	return p
}

// fillSlot writes the files of a slot into the fresh dir tmp.
func fillSlot(tmp string, yamlData []byte, down bool) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := createFile(filepath.Join(tmp, s6dir.DefinitionFile), yamlData); err != nil {
		return err
	}
	if down {
		return createFile(filepath.Join(tmp, s6dir.DownFile), nil)
	}
	return nil
}

// createFile creates a new file; nothing can be there already, since the
// directory was made empty by this process, and O_EXCL makes sure.
func createFile(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// renameNoReplace moves from to to unless to exists (even as an empty dir,
// which plain rename(2) would replace). Filesystems without
// RENAME_NOREPLACE get a check followed by rename(2).
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		if _, lerr := os.Lstat(to); lerr == nil {
			err = unix.EEXIST
		} else {
			err = unix.Rename(from, to)
		}
	}
	if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) {
		return ErrExists
	}
	if err != nil {
		return fmt.Errorf("rename to %s: %w", to, err)
	}
	return nil
}
