package svclog

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// TestRotationNeverFollowsASwappedDir: the log dir of a (root) service is
// moved away and a symlink to a victim dir put in its place; rotation goes
// on in the dir it opened and never renames or deletes anything in the
// victim (issue 14, trial 2). Runs as any user: Owner zero is root when the
// test is root, and the rights of the test's user otherwise.
func TestRotationNeverFollowsASwappedDir(t *testing.T) {
	base := t.TempDir()
	dir, moved, victim := filepath.Join(base, "logs"), filepath.Join(base, "logs.moved"), filepath.Join(base, "victim")
	must(t, os.Mkdir(victim, 0o755))
	victimFiles := map[string]string{
		currentName:                  "the victim's current\n",
		"@20000101T000000.000000Z.s": "a\n", "@20000101T000000.000001Z.s": "b\n", "@20000101T000000.000002Z.s": "c\n",
	}
	for name, text := range victimFiles {
		must(t, os.WriteFile(filepath.Join(victim, name), []byte(text), 0o644))
	}
	clock := newClock()
	const maxSize = 200
	l := newLog(t, Options{Dir: dir, MaxSize: maxSize, Keep: 1, Now: clock.Now})
	fmt.Fprintln(l.Writer(), "before the swap")
	testprog.WaitFor(t, 10*time.Second, "the first line in current", func() bool { return fileHas(filepath.Join(dir, currentName), "before the swap") })

	must(t, os.Rename(dir, moved))
	must(t, os.Symlink(victim, dir))
	for i := range 60 {
		clock.Add(retryEvery / 2)
		fmt.Fprintf(l.Writer(), "after the swap %02d %s\n", i, strings.Repeat("x", 40))
	}
	closeLog(t, l)

	if got := dirFiles(t, victim); !maps.Equal(got, victimFiles) {
		t.Fatalf("the victim dir changed: %q, want %q", got, victimFiles)
	}
	names, err := archives(moved)
	must(t, err)
	if len(names) != 1 {
		t.Fatalf("the dir written before the swap has archives %v, want keep=1 of them", names)
	}
	if st, err := os.Stat(filepath.Join(moved, currentName)); err != nil || st.Size() > maxSize {
		t.Fatalf("current of the moved dir: %v, want at most %d bytes", err, maxSize)
	}
}

// TestMovedAwayDirIsRecreated: once the log dir is moved away a new one is
// created at the path and written (the old dir gets nothing more), with one
// info line and no warning, and the new current stays bounded.
func TestMovedAwayDirIsRecreated(t *testing.T) {
	base := t.TempDir()
	dir, moved := filepath.Join(base, "logs"), filepath.Join(base, "moved")
	var out syncBuffer
	clock := newClock()
	const maxSize = 300
	l := newLog(t, Options{Dir: dir, MaxSize: maxSize, Keep: 2, Now: clock.Now,
		Logger: slog.New(slog.NewTextHandler(&out, nil))})
	fmt.Fprintln(l.Writer(), "first")
	testprog.WaitFor(t, 10*time.Second, "the first line in current", func() bool { return fileHas(filepath.Join(dir, currentName), "first") })

	must(t, os.Rename(dir, moved))
	clock.Add(retryEvery)
	fmt.Fprintln(l.Writer(), "second")
	testprog.WaitFor(t, 10*time.Second, "a new current at the old path", func() bool { return fileHas(filepath.Join(dir, currentName), "second") })
	for i := range 60 {
		clock.Add(retryEvery)
		fmt.Fprintf(l.Writer(), "more %02d %s\n", i, strings.Repeat("x", 40))
	}
	closeLog(t, l)

	if got := texts(readEntries(t, filepath.Join(moved, currentName))); len(got) != 1 || got[0] != "first" {
		t.Fatalf("the moved dir's current holds %q, want only \"first\"", got)
	}
	if st, err := os.Stat(filepath.Join(dir, currentName)); err != nil || st.Size() > maxSize {
		t.Fatalf("new current: %v, want at most %d bytes", err, maxSize)
	}
	if names, _ := archives(dir); len(names) != 2 {
		t.Fatalf("new dir has archives %v, want keep=2", names)
	}
	logged := out.String()
	if strings.Count(logged, "moved away") != 1 || strings.Contains(logged, "level=WARN") {
		t.Fatalf("hinit's log: want one \"moved away\" line and no warning, got:\n%s", logged)
	}
}

// TestRemovedDirBehindASymlinkLosesLinesCounted: the log dir removed and a
// symlink (or a file) put at its path: the path cannot be used, and the
// file held was removed with its dir. Lines are counted lost, with the
// path's error, and go to the path again once it is a dir; before, they
// went on into the removed file, unseen and uncounted.
func TestRemovedDirBehindASymlinkLosesLinesCounted(t *testing.T) {
	for _, plant := range []string{"symlink", "file"} {
		t.Run(plant, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "logs")
			clock := newClock()
			l := newLog(t, Options{Dir: dir, Now: clock.Now})
			fmt.Fprintln(l.Writer(), "first")
			testprog.WaitFor(t, 10*time.Second, "the first line in current", func() bool { return fileHas(filepath.Join(dir, currentName), "first") })

			must(t, os.RemoveAll(dir))
			if plant == "symlink" {
				must(t, os.Mkdir(filepath.Join(base, "elsewhere"), 0o755))
				must(t, os.Symlink(filepath.Join(base, "elsewhere"), dir))
			} else {
				must(t, os.WriteFile(dir, nil, 0o644))
			}
			for i := range 3 {
				fmt.Fprintf(l.Writer(), "lost %d\n", i)
			}
			testprog.WaitFor(t, 10*time.Second, "3 lines counted lost", func() bool { return l.Lost() == 3 })

			must(t, os.Remove(dir))
			clock.Add(retryEvery)
			fmt.Fprintln(l.Writer(), "back")
			testprog.WaitFor(t, 10*time.Second, "a new current at the path", func() bool { return fileHas(filepath.Join(dir, currentName), "back") })
			closeLog(t, l)
			if ents, _ := os.ReadDir(filepath.Join(base, "elsewhere")); len(ents) != 0 {
				t.Errorf("the symlink's target got %d entries, want none", len(ents))
			}
		})
	}
}

// TestPlantedCurrentIsRefused: a hard link to someone else's file or a FIFO
// planted as current is never written into (nor blocks); the line is lost.
func TestPlantedCurrentIsRefused(t *testing.T) {
	for _, plant := range []string{"hard link", "fifo"} {
		t.Run(plant, func(t *testing.T) {
			base := t.TempDir()
			dir, victim := filepath.Join(base, "logs"), filepath.Join(base, "victim")
			must(t, os.Mkdir(dir, 0o755))
			must(t, os.WriteFile(victim, []byte("victim\n"), 0o644))
			if plant == "fifo" {
				must(t, unix.Mkfifo(filepath.Join(dir, currentName), 0o644))
			} else {
				must(t, os.Link(victim, filepath.Join(dir, currentName)))
			}
			l := newLog(t, Options{Dir: dir, Now: newClock().Now})
			fmt.Fprintln(l.Writer(), "lost")
			testprog.WaitFor(t, 10*time.Second, "the line to be counted lost", func() bool { return l.Lost() == 1 })
			closeLog(t, l)
			if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
				t.Fatalf("victim file now holds %q", b)
			}
		})
	}
}

// fileHas reports whether the file at path contains s.
func fileHas(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte(s))
}

// dirFiles maps each file name in dir to its content.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	must(t, err)
	m := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must(t, err)
		m[e.Name()] = string(b)
	}
	return m
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer // guarded by mu
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRemovedCurrentIsRecreated: current removed under a running log (by
// its owner, a cleanup tool) is noticed at the next write, and renamed at
// the next look-up of the path, and opened anew: lines go on to
// <dir>/current, which stays bounded, with one info line. Before, every
// line went into the removed file for good, past max_size, and every
// rotation failed; then, for up to a second, into the removed file.
func TestRemovedCurrentIsRecreated(t *testing.T) {
	for _, how := range []string{"removed", "renamed"} {
		t.Run(how, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs")
			var out syncBuffer
			clock := newClock()
			const maxSize = 300
			l := newLog(t, Options{Dir: dir, MaxSize: maxSize, Keep: 2, Now: clock.Now,
				Logger: slog.New(slog.NewTextHandler(&out, nil))})
			cur := filepath.Join(dir, currentName)
			fmt.Fprintln(l.Writer(), "first")
			testprog.WaitFor(t, 10*time.Second, "the first line in current", func() bool { return fileHas(cur, "first") })

			if how == "removed" {
				must(t, os.Remove(cur))
				// Seen at the next write, not at the next look-up.
				fmt.Fprintln(l.Writer(), "second")
			} else {
				must(t, os.Rename(cur, filepath.Join(dir, "kept")))
				clock.Add(retryEvery)
				fmt.Fprintln(l.Writer(), "second")
			}
			testprog.WaitFor(t, 10*time.Second, "a new current", func() bool { return fileHas(cur, "second") })
			for i := range 60 {
				clock.Add(retryEvery)
				fmt.Fprintf(l.Writer(), "more %02d %s\n", i, strings.Repeat("x", 40))
			}
			closeLog(t, l)

			if st, err := os.Stat(cur); err != nil || st.Size() > maxSize {
				t.Fatalf("current: %v, want at most %d bytes", err, maxSize)
			}
			if names, _ := archives(dir); len(names) != 2 {
				t.Fatalf("archives %v, want keep=2", names)
			}
			if how == "renamed" {
				if got := texts(readEntries(t, filepath.Join(dir, "kept"))); len(got) != 1 || got[0] != "first" {
					t.Fatalf("the renamed file holds %q, want only \"first\"", got)
				}
			}
			if n := l.Lost(); n != 0 {
				t.Errorf("%d lines lost", n)
			}
			logged := out.String()
			if strings.Count(logged, "log file was removed or renamed") != 1 || strings.Contains(logged, "level=WARN") {
				t.Fatalf("hinit's log: want one \"removed or renamed\" line and no warning, got:\n%s", logged)
			}
		})
	}
}

// TestRootsLogNeverInAnotherUsersFile: a root service's log in a dir
// another user owns, who put a current of its own there to read what the
// service writes: that file is set aside as an archive, untouched, and the
// lines go to a new current, root's. Before, they were appended to the
// user's file. The dir is setgid too: the new file is root's group all the
// same, not the dir's (the user's group read it, 0640).
func TestRootsLogNeverInAnotherUsersFile(t *testing.T) {
	requireRoot(t)
	dir := filepath.Join(userHome(t), "logs")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.Chown(dir, alice.UID, alice.GID))
	must(t, unix.Chmod(dir, 0o2775)) // setgid
	planted := filepath.Join(dir, currentName)
	must(t, os.WriteFile(planted, []byte("alice's\n"), 0o644))
	must(t, os.Chown(planted, alice.UID, alice.GID))
	var out syncBuffer
	l := newLog(t, Options{Dir: dir, Keep: 2, Now: newClock().Now, Logger: slog.New(slog.NewTextHandler(&out, nil))}) // root's
	fmt.Fprintln(l.Writer(), "root's secret")
	closeLog(t, l)
	var st unix.Stat_t
	must(t, unix.Stat(planted, &st))
	if got := texts(readEntries(t, planted)); st.Uid != 0 || st.Gid != 0 || st.Mode&0o7777 != 0o640 || !slices.Equal(got, []string{"root's secret"}) {
		t.Errorf("current: %d:%d %o, %q; want root's, 0:0 0640, the line", st.Uid, st.Gid, st.Mode&0o7777, got)
	}
	names, err := archives(dir)
	must(t, err)
	if len(names) != 1 {
		t.Fatalf("archives %v, want the file set aside", names)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, names[0])); string(b) != "alice's\n" || l.Lost() != 0 {
		t.Errorf("the file set aside holds %q, %d lines lost; want alice's line, none", b, l.Lost())
	}
	if !strings.Contains(out.String(), "log file not root's: set aside") {
		t.Errorf("hinit's log:\n%s", out.String())
	}
}

// A root service's log in a dir root owns keeps what the operator set
// there: a setgid dir of a log readers' group (adm) gives current that
// group, as before. Only a dir another user owns has current made root's
// alone.
func TestRootsLogInRootsDirKeepsItsGroup(t *testing.T) {
	requireRoot(t)
	dir := filepath.Join(t.TempDir(), "logs")
	must(t, os.Mkdir(dir, 0o750))
	must(t, os.Chown(dir, 0, 4))
	must(t, unix.Chmod(dir, 0o2750)) // setgid
	l := newLog(t, Options{Dir: dir, Now: newClock().Now})
	fmt.Fprintln(l.Writer(), "for the log readers")
	closeLog(t, l)
	var st unix.Stat_t
	must(t, unix.Stat(filepath.Join(dir, currentName), &st))
	if st.Uid != 0 || st.Gid != 4 || st.Mode&0o7777 != 0o640 {
		t.Errorf("current: %d:%d %o, want 0:4 0640 (the dir's group, the operator's choice)", st.Uid, st.Gid, st.Mode&0o7777)
	}
}
