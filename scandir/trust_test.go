package scandir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUntrustedDefinitionIsRefused: a service dir or service.yaml writable
// by others is refused with the reason, its content dropped, and the verdict
// follows chmods both ways (IN_ATTRIB on the scandir and on the dir). Runs
// as any user: o+w is refused whoever owns it.
func TestUntrustedDefinitionIsRefused(t *testing.T) {
	h := start(t, "", 1000, nil)
	tmp := filepath.Join(h.dir, ".svc.tmp")
	must(t, os.Mkdir(tmp, 0o755))
	must(t, os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte(yamlA), 0o644))
	must(t, os.Chmod(tmp, 0o777))
	svc := filepath.Join(h.dir, "svc")
	must(t, os.Rename(tmp, svc))
	refused := func(what string) func(e *Entry) bool {
		return func(e *Entry) bool {
			return e.Err != nil && strings.Contains(e.Err.Error(), what+" is writable by every user") &&
				e.YAML == nil && e.Trust.Refused != nil && !e.Trust.Root
		}
	}
	h.waitEntry("svc", refused(svc))

	must(t, os.Chmod(svc, 0o755))
	e := h.waitEntry("svc", func(e *Entry) bool { return e.Err == nil })
	if string(e.YAML) != yamlA || e.Trust.Refused != nil {
		t.Fatalf("after chmod 0755: YAML %q, trust %+v", e.YAML, e.Trust)
	}
	if os.Geteuid() == 0 && !e.Trust.Root {
		t.Fatalf("root-owned 0755 dir with a 0644 file: trust %+v, want Root", e.Trust)
	}
	if os.Geteuid() != 0 && (e.Trust.Root || e.Trust.UID != os.Geteuid()) {
		t.Fatalf("dir owned by uid %d: trust %+v, want that uid", os.Geteuid(), e.Trust)
	}

	must(t, os.Chmod(filepath.Join(svc, "service.yaml"), 0o666))
	h.waitEntry("svc", refused(filepath.Join(svc, "service.yaml")))
}

// TestRootDirWithForeignFile: as root, a root-owned dir holding a file of
// another user runs as that user, and a group-writable root file is refused.
func TestRootDirWithForeignFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	h := start(t, "", 1000, nil)
	tmp := filepath.Join(h.dir, ".svc.tmp")
	must(t, os.Mkdir(tmp, 0o755))
	yaml := filepath.Join(tmp, "service.yaml")
	must(t, os.WriteFile(yaml, []byte(yamlA), 0o644))
	must(t, os.Chown(yaml, 10000, 10001))
	must(t, os.Rename(tmp, filepath.Join(h.dir, "svc")))
	e := h.waitEntry("svc", func(e *Entry) bool { return true })
	if e.Err != nil || e.Trust.Root || e.Trust.UID != 10000 || e.Trust.GID != 10001 {
		t.Fatalf("root dir, file of 10000:10001: err %v, trust %+v; want to run as 10000:10001", e.Err, e.Trust)
	}
	yaml = filepath.Join(h.dir, "svc", "service.yaml")
	must(t, os.Chown(yaml, 0, 10000))
	must(t, os.Chmod(yaml, 0o664))
	h.waitEntry("svc", func(e *Entry) bool {
		return e.Err != nil && strings.Contains(e.Err.Error(), "owned by root but writable by its group")
	})
}

// TestScandirPathReplaced: an s6 dir runs by a path through the scandir,
// so who may replace any dir of that path decides as much as who wrote the
// dir. The scandir's owner may rename it away even in a sticky /run and
// put a symlink to a root-owned tree in its place: a look after that reads
// nothing (the dir watched is gone; its event ends Run). Before, the
// root-owned tree's dir was read through the symlink, judged root's, and
// its run was later started by the path, which the owner then pointed at
// its own tree: root. A root-owned scandir inside a dir a user owns runs
// its dirs as that user, who may swap the scandir.
func TestScandirPathReplaced(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	s6svc := func(dir string) {
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	}
	look := func(t *testing.T, scandir, name string, swap func()) *Entry {
		w := New(scandir, 1000, discardLogger())
		w.S6 = true
		in, err := openInotify()
		must(t, err)
		defer in.close()
		must(t, w.watchScandir(in)) // as Run does
		swap()
		sfd, err := w.openScandir()
		if err != nil {
			return nil // the scandir watched is gone: nothing is read
		}
		defer unix.Close(sfd)
		e, why := w.look(sfd, name)
		if why != "" {
			t.Fatalf("look %s: ignored: %s", name, why)
		}
		return e
	}

	t.Run("owner swaps the scandir for a symlink", func(t *testing.T) {
		run := t.TempDir()
		must(t, unix.Chmod(run, 0o1777)) // os.Chmod would drop the sticky bit
		scandir := filepath.Join(run, "service")
		must(t, os.Mkdir(scandir, 0o755))
		must(t, os.Chown(scandir, 10000, 10000))
		rootTree := t.TempDir()
		s6svc(filepath.Join(rootTree, "t"))
		e := look(t, scandir, "t", func() {
			must(t, os.Rename(scandir, filepath.Join(run, "old")))
			must(t, os.Symlink(rootTree, scandir))
		})
		if e != nil {
			t.Fatalf("read t through the replaced scandir: trust %+v", e.Trust)
		}
	})

	t.Run("root's service.yaml dir in the user's scandir", func(t *testing.T) {
		// The user may rename root's dir away and put its own at the
		// path, where the definition's command or workdir may point:
		// root's dir there runs as the user; in root's scandir, as root.
		run := t.TempDir()
		must(t, unix.Chmod(run, 0o1777))
		for _, owner := range []int{10000, 0} {
			scandir := filepath.Join(run, fmt.Sprint("service", owner))
			must(t, os.MkdirAll(filepath.Join(scandir, "t"), 0o755))
			must(t, os.WriteFile(filepath.Join(scandir, "t", "service.yaml"), []byte(yamlA), 0o644))
			must(t, os.Chown(scandir, owner, owner))
			e := look(t, scandir, "t", func() {})
			if e == nil || e.Err != nil || e.Trust.Root != (owner == 0) || e.Trust.UID != owner {
				t.Fatalf("scandir of uid %d: entry %+v; want it to run as uid %d", owner, e, owner)
			}
		}
	})

	t.Run("root scandir in a user's dir", func(t *testing.T) {
		home := t.TempDir()
		must(t, os.Chown(home, 10000, 10000))
		scandir := filepath.Join(home, "service")
		must(t, os.Mkdir(scandir, 0o755))
		s6svc(filepath.Join(scandir, "t"))
		e := look(t, scandir, "t", func() {})
		if e == nil || e.Err != nil || e.Trust.Root || e.Trust.UID != 10000 {
			t.Fatalf("entry %+v; want it to run as 10000", e)
		}
	})

	for _, mode := range []uint32{0o777, 0o775} {
		// A Kubernetes emptyDir /run is 0777, OpenShift's often 0775:
		// the user's scandir there runs its dirs as that user.
		t.Run(fmt.Sprintf("user's scandir in a %04o /run", mode), func(t *testing.T) {
			run := t.TempDir()
			must(t, unix.Chmod(run, mode))
			scandir := filepath.Join(run, "service")
			must(t, os.Mkdir(scandir, 0o755))
			s6svc(filepath.Join(scandir, "t"))
			must(t, os.Chown(scandir, 10000, 10000))
			e := look(t, scandir, "t", func() {})
			if e == nil || e.Err != nil || e.Trust.Root || e.Trust.UID != 10000 {
				t.Fatalf("entry %+v; want it to run as 10000", e)
			}
		})
	}

	t.Run("owner swaps the scandir for a symlink before the watch", func(t *testing.T) {
		// Boot hooks and static services run as hermes before hinit
		// watches the scandir: the symlink it resolves then is hermes's
		// choice, and what it leads to runs as hermes.
		run := t.TempDir()
		must(t, unix.Chmod(run, 0o1777))
		rootTree := t.TempDir()
		s6svc(filepath.Join(rootTree, "t"))
		scandir := filepath.Join(run, "service")
		must(t, os.Symlink(rootTree, scandir))
		must(t, os.Lchown(scandir, 10000, 10000))
		e := look(t, scandir, "t", func() {})
		if e == nil || e.Err != nil || e.Trust.Root || e.Trust.UID != 10000 {
			t.Fatalf("entry %+v; want it to run as 10000", e)
		}
	})

	t.Run("root's symlink in root's dir in a user's dir", func(t *testing.T) {
		// The user may rename data away and put a dir of their own
		// with a symlink of their own in its place, to any tree: the
		// symlink is theirs to choose, though root made it.
		opt := filepath.Join(t.TempDir(), "opt")
		must(t, os.Mkdir(opt, 0o755))
		must(t, os.Mkdir(filepath.Join(opt, "data"), 0o755))
		must(t, os.Chown(opt, 10000, 10000))
		rootTree := t.TempDir()
		s6svc(filepath.Join(rootTree, "t"))
		must(t, os.Symlink(rootTree, filepath.Join(opt, "data", "service")))
		e := look(t, filepath.Join(opt, "data", "service"), "t", func() {})
		if e == nil || e.Err != nil || e.Trust.Root || e.Trust.UID != 10000 {
			t.Fatalf("entry %+v; want it to run as 10000", e)
		}
	})

	t.Run("root scandir through root's symlink", func(t *testing.T) {
		base := t.TempDir()
		must(t, os.Mkdir(filepath.Join(base, "run"), 0o755))
		must(t, os.Mkdir(filepath.Join(base, "var"), 0o755))
		must(t, os.Symlink("../run", filepath.Join(base, "var", "run")))
		s6svc(filepath.Join(base, "run", "service", "t"))
		e := look(t, filepath.Join(base, "var", "run", "service"), "t", func() {})
		if e == nil || e.Err != nil || !e.Trust.Root || e.Dir != filepath.Join(base, "run", "service", "t") {
			t.Fatalf("entry %+v; want root's, at the resolved path", e)
		}
	})

	t.Run("root scandir in sticky /run", func(t *testing.T) {
		run := t.TempDir()
		must(t, unix.Chmod(run, 0o1777)) // os.Chmod would drop the sticky bit
		scandir := filepath.Join(run, "service")
		must(t, os.Mkdir(scandir, 0o755))
		s6svc(filepath.Join(scandir, "t"))
		e := look(t, scandir, "t", func() {})
		if e == nil || e.Err != nil || !e.Trust.Root {
			t.Fatalf("entry %+v; want root's", e)
		}
	})
}
