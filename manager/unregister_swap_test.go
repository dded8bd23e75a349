package manager_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hinit/asuser"
	"hinit/control"
	"hinit/internal/testprog"
	mt "hinit/manager/managertest"
)

// The image's scandir belongs to the hermes user and /run is 1777: hermes
// may rename the scandir away and put a symlink to any tree in its place.
// Root's hsvc unregister NAME then removes nothing outside the scandir
// hinit watches (the old code removed the tree's root-owned NAME: an
// entry "hermes" and a symlink to /opt took /opt/hermes).
func TestUnregisterThroughSwappedScandir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the removal at stake is root's")
	}
	hermes := asuser.ID{UID: 10000, GID: 10000}
	f := mt.Start(t, "", nil)
	parent := filepath.Dir(f.Scandir)
	if err := os.Chmod(filepath.Dir(parent), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o1777); err != nil { // as /run
		t.Fatal(err)
	}
	if err := os.Chown(f.Scandir, hermes.UID, hermes.GID); err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir() // root's, with a dir named as the entry
	if err := os.Chmod(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(tree, "victim", "precious")
	if err := os.MkdirAll(filepath.Dir(precious), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(precious, []byte("root's"), 0o644); err != nil {
		t.Fatal(err)
	}
	// hermes plants an entry the watcher ignores (a file), then swaps the
	// scandir for a symlink to the tree, with its own rights only.
	if err := asuser.Do(hermes, func() error {
		return os.WriteFile(filepath.Join(f.Scandir, "victim"), nil, 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 5*time.Second, "victim noted as ignored", func() bool { return f.Status("victim") != nil })
	if err := asuser.Do(hermes, func() error {
		if err := os.Rename(f.Scandir, f.Scandir+".old"); err != nil {
			return err
		}
		return os.Symlink(tree, f.Scandir)
	}); err != nil {
		t.Fatal(err)
	}
	resp := f.Do(control.Request{Verb: control.VerbUnregister, Names: []string{"victim"}})
	if resp.Code != control.CodeFailed || !strings.Contains(resp.Error, "scandir was removed or moved") {
		t.Errorf("unregister answered %d %q, want %d and the scandir gone", resp.Code, resp.Error, control.CodeFailed)
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "root's" {
		t.Errorf("root's unregister removed a root-owned dir outside the scandir: %q, %v", b, err)
	}
}

// The hermes user's slot dir may hold a chain of dirs deeper than PID 1's
// descriptor limit (hermes makes one in a second with mkdirat and openat).
// Its unregister removes it without a descriptor per level: os.Root's
// RemoveAll held one per level, so the unregister failed with EMFILE, the
// dir stayed (and a new unregister did it again), and while it walked PID
// 1 had no descriptor left for anything else. The limit is lowered here
// to the descriptors open plus 64, for a chain of 400 levels.
func TestUnregisterDeepTree(t *testing.T) {
	f := mt.Start(t, "", nil)
	f.Publish("deep", "command: "+mt.Prog("sleep", "inf")+"\n"+mt.Env)
	f.Expect(control.Request{Verb: control.VerbWait, Names: []string{"deep"}, Until: control.UntilUp, Wait: "10s"}, 0, "")
	testprog.DeepChain(t, filepath.Join(f.Scandir, "deep", "tree"), 400)
	restore := testprog.LimitDescriptors(t, 64)
	resp := f.Do(control.Request{Verb: control.VerbUnregister, Names: []string{"deep"}, Wait: "10s"})
	restore()
	if !resp.OK {
		t.Errorf("unregister --wait answered %d %.300q, want 0", resp.Code, resp.Error)
	}
	if _, err := os.Lstat(filepath.Join(f.Scandir, "deep")); !os.IsNotExist(err) {
		t.Errorf("dir still there after unregister --wait: %v", err)
	}
}
