package scandir

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"hinit/errcap"
	"hinit/s6dir"
	"hinit/trust"
)

// readEntry reads the service dir name of the scandir sfd (path names it).
// It reports ok == false when there is nothing to report (yet): the dir is
// gone, is not a dir any more, or has no service.yaml. Problems with
// service.yaml itself go into Entry.Err; err is only for a dir that exists
// but cannot be opened.
//
// Everything is read relative to one descriptor of the dir, opened from
// sfd with O_NOFOLLOW, so owner, service.yaml and down all come from the
// same dir even if a writer swaps it (or the scandir) for a symlink
// meanwhile. seed is the Watcher's, for Entry.sum.
func readEntry(sfd int, name, path string, s6 bool, chose []trust.Link, seed maphash.Seed) (e Entry, ok bool, err error) {
	dfd, err := unix.Openat(sfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil {
		return Entry{}, false, fmt.Errorf("stat %s: %w", path, err)
	}
	e = Entry{Name: name, Dir: path, UID: int(st.Uid), GID: int(st.Gid), dev: st.Dev, ino: st.Ino}
	var judge trust.Judge
	judge.Add(path, &st)
	for _, l := range chose { // they chose the scandir
		judge.AddReplacers(l.Path, l.Parent, &l.St, &l.Pst)
	}
	e.YAML, e.ModTime, e.Err = readYAML(dfd, path, &judge)
	if errors.Is(e.Err, unix.ENOENT) && s6 {
		e.Err = nil
		if e.S6, e.Err = s6dir.Read(dfd, path, &judge); errors.Is(e.Err, s6dir.ErrNotS6) {
			return Entry{}, false, nil // neither service.yaml nor run (yet)
		}
	}
	if errors.Is(e.Err, unix.ENOENT) {
		return Entry{}, false, nil // no service.yaml (yet)
	}
	// Whoever may rename the scandir's entries counts as an author of
	// every one: they can put their own dir at this path after the read,
	// and what the definition runs or reads by a path through it (an s6
	// dir's run; a service.yaml's command, workdir or PATH beside it) is
	// then theirs.
	if err := execParent(sfd, path, &judge); err != nil {
		return Entry{}, false, err
	}
	e.Trust = judge.Verdict()
	e.Trust.Refused = errcap.Error(e.Trust.Refused)
	if e.Err == nil && e.Trust.Refused != nil {
		e.YAML, e.S6, e.Err = nil, nil, e.Trust.Refused // nothing an untrusted writer wrote is kept
	}
	e.Err = errcap.Error(e.Err)
	if e.Err == nil {
		e.sum = maphash.Bytes(seed, e.YAML)
	}
	e.Down = hasFile(dfd, s6dir.DownFile)
	return e, true, nil
}

// execParent shows judge the scandir sfd holding the service dir path,
// through which an s6 dir's run, finish and log/run are executed by path
// later, and a service.yaml's command or workdir may be
// (trust.Judge.AddExecParent), and who may replace each dir of that path
// from the scandir up (trust.Judge.AddReplacers).
func execParent(sfd int, path string, judge *trust.Judge) error {
	scandir := filepath.Dir(path)
	var st unix.Stat_t
	if err := unix.Fstat(sfd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", scandir, err)
	}
	judge.AddExecParent(scandir, &st)
	for p := scandir; p != "/" && p != "."; p = filepath.Dir(p) {
		var st, pst unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if err := unix.Stat(filepath.Dir(p), &pst); err != nil {
			return fmt.Errorf("stat %s: %w", filepath.Dir(p), err)
		}
		judge.AddReplacers(p, filepath.Dir(p), &st, &pst)
	}
	return nil
}

// hasFile reports whether anything named name exists in the dir dfd; a
// symlink counts as itself and is not followed.
func hasFile(dfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// readYAML reads service.yaml from the dir dfd, refusing symlinks and
// anything but a regular file, and shows the file it read to judge.
// O_NONBLOCK keeps a FIFO planted there from blocking the open; MaxYAMLSize
// caps what is read.
func readYAML(dfd int, dir string, judge *trust.Judge) ([]byte, time.Time, error) {
	path := dir + "/" + s6dir.DefinitionFile
	fd, err := unix.Openat(dfd, s6dir.DefinitionFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, time.Time{}, fmt.Errorf("open %s: %w", path, ErrNotRegular)
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("open %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, time.Time{}, fmt.Errorf("stat %s: %w", path, err)
	}
	mtime := time.Unix(st.Mtim.Unix())
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, mtime, fmt.Errorf("read %s: %w", path, ErrNotRegular)
	}
	judge.Add(path, &st)
	if trust.ForeignLink(dfd, &st) {
		return nil, mtime, fmt.Errorf("read %s: %w", path, ErrLinked)
	}
	if st.Size > MaxYAMLSize {
		return nil, mtime, fmt.Errorf("read %s: %w", path, ErrTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxYAMLSize+1))
	if err != nil {
		return nil, mtime, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxYAMLSize {
		return nil, mtime, fmt.Errorf("read %s: %w", path, ErrTooLarge)
	}
	return b, mtime, nil
}
