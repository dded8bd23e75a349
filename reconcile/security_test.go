package reconcile

import (
	"hinit/gwstate"

	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Symlinks planted in $HERMES_HOME must never let Run read or write what
// they point to. Each case plants one; the outside dir (hermes' own, so a
// followed link would succeed) must stay exactly as it was. Every case runs
// as root, the worst case, and as hermes through asuser.Do, as in production.
func TestSymlinksNotFollowed(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, w *world)
		check func(t *testing.T, w *world, actions []Action)
	}{
		{"logs dir", func(t *testing.T, w *world) {
			symlink(t, w.outside, filepath.Join(w.home, "logs"))
		}, func(t *testing.T, w *world, _ []Action) {
			wantWarning(t, w, "boot log")
		}},
		{"boot log", func(t *testing.T, w *world) {
			mkdir(t, filepath.Join(w.home, "logs"))
			symlink(t, filepath.Join(w.outside, "victim"), filepath.Join(w.home, "logs", BootLog))
		}, func(t *testing.T, w *world, _ []Action) {
			wantWarning(t, w, "boot log")
		}},
		{"rotated boot log", func(t *testing.T, w *world) {
			mkdir(t, filepath.Join(w.home, "logs"))
			writeFile(t, filepath.Join(w.home, "logs", BootLog), strings.Repeat("x", bootLogMax))
			symlink(t, filepath.Join(w.outside, "victim"), filepath.Join(w.home, "logs", BootLog+".1"))
		}, func(t *testing.T, w *world, _ []Action) {
			if st, err := os.Lstat(filepath.Join(w.home, "logs", BootLog+".1")); err != nil || !st.Mode().IsRegular() {
				t.Errorf("log.1 should now be the rotated log: %v", err)
			}
		}},
		{"gateway.pid", func(t *testing.T, w *world) {
			dir := w.profile(t, "x", `{"gateway_state":"running"}`)
			symlink(t, filepath.Join(w.outside, "victim"), filepath.Join(dir, "gateway.pid"))
			symlink(t, filepath.Join(w.outside, "victim"), filepath.Join(dir, "processes.json"))
		}, func(t *testing.T, w *world, _ []Action) {
			for _, f := range staleFiles {
				if _, err := os.Lstat(filepath.Join(w.home, "profiles", "x", f)); !os.IsNotExist(err) {
					t.Errorf("the planted link %s itself should be gone: %v", f, err)
				}
			}
		}},
		{"gateway_state.json", func(t *testing.T, w *world) {
			dir := w.profile(t, "x", "")
			symlink(t, filepath.Join(w.outside, "gateway_state.json"), filepath.Join(dir, gwstate.StateFileName))
		}, func(t *testing.T, w *world, actions []Action) {
			a := find(actions, "x")
			if a == nil || a.Start || a.Prior != "none" || !strings.Contains(a.Warning, "symlink") {
				t.Errorf("action = %+v, want down, prior none, a symlink warning", a)
			}
		}},
		{"root gateway_state.json", func(t *testing.T, w *world) {
			symlink(t, filepath.Join(w.outside, "gateway_state.json"), filepath.Join(w.home, gwstate.StateFileName))
		}, func(t *testing.T, w *world, actions []Action) {
			if a := find(actions, "default"); a == nil || a.Start || !strings.Contains(a.Warning, "symlink") {
				t.Errorf("action = %+v, want down with a symlink warning", a)
			}
		}},
		{"profile dir", func(t *testing.T, w *world) {
			mkdir(t, filepath.Join(w.home, "profiles"))
			symlink(t, filepath.Join(w.outside, "profile"), filepath.Join(w.home, "profiles", "x"))
		}, func(t *testing.T, w *world, actions []Action) {
			if find(actions, "x") != nil {
				t.Error("a symlinked profile dir was reconciled")
			}
			wantWarning(t, w, "profiles/x")
		}},
		{"profiles dir", func(t *testing.T, w *world) {
			mkdir(t, filepath.Join(w.outside, "profiles"))
			symlink(t, filepath.Join(w.outside, "profile"), filepath.Join(w.outside, "profiles", "x"))
			symlink(t, filepath.Join(w.outside, "profiles"), filepath.Join(w.home, "profiles"))
		}, func(t *testing.T, w *world, actions []Action) {
			if len(actions) != 1 {
				t.Errorf("actions = %+v, want only default", actions)
			}
			wantWarning(t, w, "named profiles skipped")
		}},
	}
	for _, who := range []string{"hermes", "root"} {
		for _, tc := range tests {
			t.Run(who+"/"+tc.name, func(t *testing.T) {
				w := newWorld(t)
				tc.plant(t, w)
				before := snapshot(t, w.outside)
				actions, err := w.run(t, who == "root", "running")
				if err != nil {
					t.Fatal(err)
				}
				assertUnchanged(t, before, w.outside)
				tc.check(t, w, actions)
			})
		}
	}
}

func find(actions []Action, profile string) *Action {
	for i := range actions {
		if actions[i].Profile == profile {
			return &actions[i]
		}
	}
	return nil
}

func wantWarning(t *testing.T, w *world, sub string) {
	t.Helper()
	if !strings.Contains(w.logs.String(), "level=WARN") || countLines(w.logs.String(), sub) != 1 {
		t.Errorf("want one warning about %q in:\n%s", sub, w.logs.String())
	}
}
