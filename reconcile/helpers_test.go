package reconcile

import (
	"hinit/gwstate"

	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"hinit/asuser"
)

// hermes is the identity hinit lends Run in production.
var hermes = asuser.ID{UID: 10000, GID: 10000}

// testNow is a fixed boot time; the boot log shows it as +0000.
var testNow = time.Date(2026, 5, 21, 6, 18, 5, 0, time.UTC)

// world is a test container: home and scandir owned by hermes, and an
// outside dir, also hermes', that a followed symlink would let Run write.
type world struct {
	home, scan, outside string
	logs                bytes.Buffer
}

func newWorld(t testing.TB) *world {
	t.Helper()
	root := t.TempDir()
	// t.TempDir makes <tmp>/<TestName><n>/<seq>, both 0700 and root's.
	os.Chmod(root, 0o755)
	os.Chmod(filepath.Dir(root), 0o755)
	w := &world{
		home:    filepath.Join(root, "home"),
		scan:    filepath.Join(root, "scan"),
		outside: filepath.Join(root, "outside"),
	}
	for _, d := range []string{w.home, w.scan, w.outside} {
		mkdir(t, d)
	}
	writeFile(t, filepath.Join(w.outside, "victim"), "untouched\n")
	writeFile(t, filepath.Join(w.outside, "gateway_state.json"), `{"gateway_state":"running"}`)
	mkdir(t, filepath.Join(w.outside, "profile"))
	writeFile(t, filepath.Join(w.outside, "profile", gwstate.SoulFile), "soul")
	writeFile(t, filepath.Join(w.outside, "profile", "gateway.pid"), "7")
	return w
}

// profile creates home/profiles/name with SOUL.md and, unless state is "",
// a gateway_state.json holding state.
func (w *world) profile(t testing.TB, name, state string) string {
	t.Helper()
	dir := filepath.Join(w.home, "profiles", name)
	mkdir(t, filepath.Join(w.home, "profiles"))
	mkdir(t, dir)
	writeFile(t, filepath.Join(dir, gwstate.SoulFile), "soul")
	if state != "" {
		writeFile(t, filepath.Join(dir, gwstate.StateFileName), state)
	}
	return dir
}

// run calls Run as hermes (asuser.Do) or, with asRoot, as root.
func (w *world) run(t testing.TB, asRoot bool, bootstrap string) ([]Action, error) {
	t.Helper()
	opts := Options{
		Home: w.home, Scandir: w.scan, Template: "gateway", Bootstrap: bootstrap,
		Now:    func() time.Time { return testNow },
		Logger: slog.New(slog.NewTextHandler(&w.logs, nil)),
	}
	if asRoot {
		return Run(opts)
	}
	var actions []Action
	err := asuser.Do(hermes, func() (err error) {
		actions, err = Run(opts)
		return err
	})
	return actions, err
}

// snapshot records every path under dir with its type and content, to
// prove that nothing there changed.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		st, _ := d.Info()
		v := st.Mode().String()
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			v += " -> " + l
		}
		snap[p] = v
		return nil
	})
	return snap
}

func assertUnchanged(t testing.TB, before map[string]string, dir string) {
	t.Helper()
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed:\nbefore %v\nafter  %v", dir, before, after)
	}
}

// slot returns the service.yaml of a published slot and whether it is down;
// yaml is "" when there is no slot.
func (w *world) slot(t testing.TB, name string) (yaml string, down bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.scan, name, "service.yaml"))
	if err != nil {
		return "", false
	}
	_, err = os.Lstat(filepath.Join(w.scan, name, "down"))
	return string(b), err == nil
}

// entries lists the names in dir.
func entries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// mkdir makes dir (once) and gives it to hermes.
func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	chown(t, dir)
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	chown(t, p)
}

func symlink(t testing.TB, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(p, hermes.UID, hermes.GID); err != nil {
		t.Fatal(err)
	}
}

func chown(t testing.TB, p string) {
	t.Helper()
	if err := os.Lchown(p, hermes.UID, hermes.GID); err != nil {
		t.Fatal(err)
	}
}

func readString(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func countLines(s, sub string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}
