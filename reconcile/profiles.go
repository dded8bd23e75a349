package reconcile

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
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

// listProfiles returns the root profile and the real named profiles in
// home/profiles, sorted by name; with slots > 0, only as many as that many
// gateway slots hold, the root's included: the first by name, as the
// scandir itself fills its slots. Entries are skipped, with one warning
// each (the first maxSkipWarnings, then one line for the rest), when they
// are symlinks, named "default" or badly named; dirs
// without SOUL.md are not profiles and are skipped silently. The dir is
// read in batches and only the profiles kept are held: the hermes user may
// fill it with any number of entries, which PID 1 reads at every boot. The
// error reports a profiles dir that exists but cannot be listed. links are
// the symlinks among those said that lead to a profile (linkedProfile)
// under a name that could be a slot's: the s6 image followed them, and the
// boot log says each was skipped.
func listProfiles(home gwstate.Home, template string, slots int, log *slog.Logger) (list []profile, links []string, err error) {
	list = []profile{{name: gwstate.DefaultProfile, dir: home.ProfileDir(gwstate.DefaultProfile)}}
	named := &byNameDesc{}
	more, skipped := 0, 0
	skip := func(msg string, args ...any) bool {
		skipped++
		if skipped <= maxSkipWarnings {
			log.Warn(msg, args...)
		}
		return skipped <= maxSkipWarnings
	}
	err = eachEntry(home.Profiles(), log, func(name string) {
		dir := filepath.Join(home.Profiles(), name) // "default" here is a dir to skip, not the home
		if ok, err := isProfile(dir); !ok {
			if err != nil && skip("reconcile: profile skipped", "dir", dir, "err", err) && badName(name, template) == "" && linkedProfile(dir) {
				links = append(links, name)
			}
			return
		}
		if reason := badName(name, template); reason != "" {
			skip("reconcile: profile skipped: "+reason, "dir", dir)
			return
		}
		heap.Push(named, profile{name: name, dir: dir})
		if slots > 0 && named.Len() > slots-1 {
			heap.Pop(named) // the last by name
			more++
		}
	})
	if err != nil {
		return list, links, err
	}
	if skipped > maxSkipWarnings {
		log.Warn(fmt.Sprintf("reconcile: %d more entries skipped (symlinks, bad names), not each said", skipped-maxSkipWarnings), "dir", home.Profiles())
	}
	if more > 0 {
		log.Warn(fmt.Sprintf("reconcile: %d more profiles skipped: no more than %d gateway slots (services_max)", more, slots), "dir", home.Profiles())
	}
	kept := []profile(*named)
	sort.Slice(kept, func(i, j int) bool { return kept[i].name < kept[j].name })
	return append(list, kept...), links, nil
}

// maxSkipWarnings is how many entries of profiles/ skipped at a boot get a
// warning of their own; the rest are counted in one line. The hermes user
// may fill the dir with symlinks, one warning line each at every boot
// (a million of them, a million lines in docker logs).
const maxSkipWarnings = 10

// byNameDesc is a heap of profiles, the last by name on top.
type byNameDesc []profile

func (h byNameDesc) Len() int           { return len(h) }
func (h byNameDesc) Less(i, j int) bool { return h[i].name > h[j].name }
func (h byNameDesc) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byNameDesc) Push(x any)        { *h = append(*h, x.(profile)) }
func (h *byNameDesc) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// eachEntry calls fn with each entry name of dir, read in batches, without
// following dir itself if it is a symlink. A missing dir has none.
func eachEntry(dir string, log *slog.Logger, fn func(name string)) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		log.Warn("reconcile: not a directory (a symlink is not followed): named profiles skipped", "dir", dir)
		return nil
	case err != nil:
		return fmt.Errorf("list profiles in %s: %w", dir, err)
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	for {
		batch, err := f.ReadDir(256)
		for _, e := range batch {
			fn(e.Name())
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("list profiles in %s: %w", dir, err)
		}
	}
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

// linkedProfile reports whether the symlink dir leads to a directory
// holding SOUL.md: a profile the s6 image followed. Only looked at, as the
// image's user (reconcile runs as hermes), never opened or written.
func linkedProfile(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, gwstate.SoulFile))
	return err == nil
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
