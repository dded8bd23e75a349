package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeFiles writes name -> content under dir (creating subdirs), mode 0644.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Drop-ins add services, templates and boot hooks after hinit.yaml's, in
// file name order; hidden files and other suffixes are not read; the
// reconcile template may come from a drop-in.
func TestLoadDropIns(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hinit.yaml": "user: hermes\nservices:\n  a: {command: [a]}\nboot:\n  - {name: first, command: [true]}\n" +
			"reconcile: {home: /opt/data, template: gateway}\n",
		"hinit.d/20-b.yaml":     "services:\n  b: {command: [b]}\nboot:\n  - {name: second, command: [true]}\n",
		"hinit.d/10-c.yaml":     "services:\n  c: {command: [c]}\ntemplates:\n  gateway: {command: [gw, '{instance}']}\n",
		"hinit.d/.draft.yaml":   "services: [broken\n",
		"hinit.d/README.txt":    "not yaml at all: [\n",
		"hinit.d/30-empty.yaml": "# nothing yet\n",
	})
	c, err := Load(filepath.Join(dir, "hinit.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var svcs, hooks []string
	for _, s := range c.Services {
		svcs = append(svcs, s.Name+"@"+filepath.Base(s.File))
	}
	for _, h := range c.Boot {
		hooks = append(hooks, h.Name+"@"+filepath.Base(h.File))
	}
	if want := []string{"a@hinit.yaml", "c@10-c.yaml", "b@20-b.yaml"}; !reflect.DeepEqual(svcs, want) {
		t.Errorf("services %q, want %q", svcs, want)
	}
	if want := []string{"first@hinit.yaml", "second@20-b.yaml"}; !reflect.DeepEqual(hooks, want) {
		t.Errorf("boot %q, want %q", hooks, want)
	}
	if c.Templates["gateway"] == nil || c.Reconcile.Template != "gateway" {
		t.Errorf("template gateway from 10-c.yaml not merged: %v", c.Templates)
	}
	d := filepath.Join(dir, DropInDir)
	if want := []string{d + "/10-c.yaml", d + "/20-b.yaml", d + "/30-empty.yaml"}; !reflect.DeepEqual(c.DropIns, want) {
		t.Errorf("DropIns %q, want %q", c.DropIns, want)
	}
}

// A name defined twice, across hinit.yaml and drop-ins or across two
// drop-ins, is an error naming both file:line; keys that are the image's
// are refused in a drop-in; every file's problems come out in one pass.
func TestLoadDropInErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hinit.yaml": "services:\n  web: {command: [w]}\nboot:\n  - {name: seed, command: [true]}\n" +
			"reconcile: {home: /h, template: nowhere}\n",
		"hinit.d/10-x.yaml": "templates:\n  gw: {command: [gw]}\nservices:\n  web: {command: [w2]}\n",
		"hinit.d/20-y.yaml": "user: root\nboot:\n  - {name: seed, command: [true]}\ntemplates:\n  gw: {command: [other]}\nservice: {}\n",
		"hinit.d/30-z.yaml": "services:\n  ok: {command: [z], restart: sometimes}\n",
	})
	main, x, y, z := filepath.Join(dir, "hinit.yaml"), filepath.Join(dir, "hinit.d/10-x.yaml"),
		filepath.Join(dir, "hinit.d/20-y.yaml"), filepath.Join(dir, "hinit.d/30-z.yaml")
	_, err := Load(main)
	checkProblems(t, err, []string{
		main + `:5: reconcile.template: "nowhere" is not one of the templates (gw)`,
		x + `:4: services.web: defined twice (first at ` + main + `:2)`,
		y + `:1: user: belongs in hinit.yaml, not in a drop-in (a drop-in holds services, templates, boot)`,
		y + `:3: boot hook "seed": defined twice (first at ` + main + `:4)`,
		y + `:5: templates.gw: defined twice (first at ` + x + `:2)`,
		y + `:6: service: unknown key (expected one of services, templates, boot)`,
		z + `:2: services.ok.restart: "sometimes" is not a restart policy (always, on-failure, never)`,
	})
}

// A missing hinit.yaml falls back to the defaults (fs.ErrNotExist), unless
// drop-ins wait beside it: those are never ignored silently. A drop-in
// writable by others is refused.
func TestLoadDropInRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hinit.yaml")
	writeFiles(t, dir, map[string]string{"hinit.d/10-x.yaml": "services:\n  x: {command: [x]}\n"})
	_, err := Load(path)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing hinit.yaml with a drop-in: %v, want an error that is not fs.ErrNotExist", err)
	}
	want := "read config: " + path + " is missing but " + filepath.Join(dir, DropInDir) + " holds 1 drop-in(s): create it (an empty file is the defaults)"
	if err.Error() != want {
		t.Errorf("got %q\nwant %q", err, want)
	}
	writeFiles(t, dir, map[string]string{"hinit.yaml": ""})
	x := filepath.Join(dir, "hinit.d/10-x.yaml")
	if err := os.Chmod(x, 0o666); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	checkProblems(t, err, []string{x + ": refused: it is writable by others (chmod o-w " + x + ")"})
	if os.Geteuid() != 0 {
		return // the group rule is about root-owned files
	}
	// Root-owned but writable by its group (root:hermes 0664): whoever is
	// in the group could add a boot hook that runs as root.
	if err := os.Chmod(x, 0o664); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	checkProblems(t, err, []string{x + ": refused: it is owned by root but writable by its group (chmod g-w " + x + ")"})
	if err := os.Chmod(x, 0o644); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "hinit.yaml")
	if err := os.Chmod(main, 0o664); err != nil {
		t.Fatal(err)
	}
	want = "read config: " + main + " is owned by root but writable by its group (chmod g-w " + main + ")"
	if _, err = Load(path); err == nil || err.Error() != want {
		t.Errorf("group-writable hinit.yaml: %v, want %q", err, want)
	}
}

// TestLoadKeepsEveryProblem: the error of hinit.yaml and its drop-ins
// holds every problem of every file, for check-config (All); its text
// (Lines: hinit's boot) stays about errcap.Max bytes and counts the rest
// right. Before, each file kept 16 problems and Load dropped the count
// of the others: 22 problems printed 6 lines and "and 12 more problems".
// A service.yaml still keeps 16, and All counts the others.
func TestLoadKeepsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	main, dropIn := filepath.Join(dir, "hinit.yaml"), filepath.Join(dir, DropInDir, "50-x.yaml")
	if err := os.Mkdir(filepath.Dir(dropIn), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var want []string
	const expected = "unknown key (expected one of user, main, services, templates, boot, reconcile, services_max, shutdown_timeout, env, compat)"
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "k%02d: 1\n", i)
		want = append(want, fmt.Sprintf("%s:%d: k%02d: %s", main, i, i, expected))
	}
	want = append(want,
		dropIn+":1: x: unknown key (expected one of services, templates, boot)",
		dropIn+":2: y: unknown key (expected one of services, templates, boot)")
	if err := os.WriteFile(main, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dropIn, []byte("x: 1\ny: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(main)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load: %v, want an *Error", err)
	}
	if got := strings.Join(ce.All(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("All:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	// Lines: as many as fit in errcap.Max (5 or 6 with a temp dir's
	// path), then the true count of the others.
	lines := ce.Lines()
	shown := len(lines) - 1
	wantLines := append(want[:shown:shown], fmt.Sprintf("and %d more problems", len(want)-shown))
	if got := strings.Join(lines, "\n"); shown < 1 || got != strings.Join(wantLines, "\n") {
		t.Errorf("Lines:\n%s\nwant:\n%s", got, strings.Join(wantLines, "\n"))
	}
	if n := len(err.Error()); n > 1100 {
		t.Errorf("error text is %d bytes, want about 1 KiB", n)
	}

	_, _, err = ParseService("service.yaml", []byte("command: [x]\n"+b.String()), "")
	if !errors.As(err, &ce) {
		t.Fatalf("ParseService: %v, want an *Error", err)
	}
	all := ce.All()
	if len(all) != MaxProblems+1 || all[MaxProblems] != "and 4 more problems" {
		t.Errorf("ParseService's All has %d lines ending %q; want %d and \"and 4 more problems\"", len(all), all[len(all)-1], MaxProblems+1)
	}
}

// A boot hook named twice in one drop-in is one problem, said once (the
// in-file check and the across-files check both saw it); compat is
// hinit.yaml's, as the other image keys are.
func TestLoadDropInOneLinePerProblem(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hinit.yaml":        "boot:\n  - {name: seed, command: [true]}\n",
		"hinit.d/10-x.yaml": "boot:\n  - {name: b, command: [true]}\n  - {name: b, command: [true]}\ncompat: s6-overlay\n",
	})
	x := filepath.Join(dir, "hinit.d/10-x.yaml")
	_, err := Load(filepath.Join(dir, "hinit.yaml"))
	checkProblems(t, err, []string{
		x + `:3: boot[1]: hook name "b" is used twice (first at line 2)`,
		x + `:4: compat: belongs in hinit.yaml, not in a drop-in (a drop-in holds services, templates, boot)`,
	})
}
