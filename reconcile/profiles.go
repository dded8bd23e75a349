package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"hinit/gwstate"
	"hinit/svcname"

	"golang.org/x/sys/unix"
)

// profile is one gateway to reconcile.
type profile struct {
	name string
	dir  string
}

// listProfiles returns the root profile and every real named profile in
// home/profiles, sorted by name. Entries are skipped, with one warning each,
// when they are symlinks, named "default" or badly named; dirs without
// SOUL.md are not profiles and are skipped silently. The error reports a
// profiles dir that exists but cannot be listed.
func listProfiles(home gwstate.Home, template string, log *slog.Logger) ([]profile, error) {
	list := []profile{{name: gwstate.DefaultProfile, dir: home.ProfileDir(gwstate.DefaultProfile)}}
	names, err := readProfilesDir(home.Profiles(), log)
	if err != nil {
		return list, err
	}
	for _, name := range names {
		dir := filepath.Join(home.Profiles(), name) // "default" here is a dir to skip, not the home
		if ok, err := isProfile(dir); !ok {
			if err != nil {
				log.Warn("reconcile: profile skipped", "dir", dir, "err", err)
			}
			continue
		}
		if reason := badName(name, template); reason != "" {
			log.Warn("reconcile: profile skipped: "+reason, "dir", dir)
			continue
		}
		list = append(list, profile{name: name, dir: dir})
	}
	return list, nil
}

// readProfilesDir lists the entry names of dir without following dir
// itself if it is a symlink. A missing dir holds no profiles.
func readProfilesDir(dir string, log *slog.Logger) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		log.Warn("reconcile: not a directory (a symlink is not followed): named profiles skipped", "dir", dir)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list profiles in %s: %w", dir, err)
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list profiles in %s: %w", dir, err)
	}
	sort.Strings(names)
	return names, nil
}

// errSymlinkDir reports a symlink where a profile dir was expected.
var errSymlinkDir = errors.New("is a symlink, not followed")

// isProfile reports whether dir is a real directory (not a symlink)
// holding SOUL.md; err says why a symlink was not taken.
func isProfile(dir string) (bool, error) {
	st, err := os.Lstat(dir)
	switch {
	case err != nil:
		return false, nil // vanished while listing
	case st.Mode()&os.ModeSymlink != 0:
		return false, errSymlinkDir
	case !st.IsDir():
		return false, nil
	}
	_, err = os.Lstat(filepath.Join(dir, gwstate.SoulFile))
	return err == nil, nil
}

// badName says why name cannot be a gateway slot, or "" when it can.
func badName(name, template string) string {
	switch {
	case name == gwstate.DefaultProfile:
		return "\"default\" is reserved for $HERMES_HOME itself"
	}
	if err := svcname.CheckInstance(template, name); err != nil {
		return err.Error()
	}
	return ""
}
