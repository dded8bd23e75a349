package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// probe is a file that holds the key zz_unknown where a section's keys go;
// decoding it yields the keys the parser accepts there, from its "unknown
// key (expected one of ...)" message.
type probe struct {
	kind string // "hinit.yaml", "drop-in" or "service.yaml"
	yaml string
}

// sections maps each heading of docs/config.md that lists keys to a probe.
var sections = map[string]probe{
	"hinit.yaml":                        {"hinit.yaml", "zz_unknown: 1\n"},
	"main":                              {"hinit.yaml", "main: {zz_unknown: 1}\n"},
	"services.NAME":                     {"hinit.yaml", "services: {web: {command: [x], zz_unknown: 1}}\n"},
	"services.NAME.backoff":             {"hinit.yaml", "services: {web: {command: [x], backoff: {zz_unknown: 1}}}\n"},
	"services.NAME.give_up":             {"hinit.yaml", "services: {web: {command: [x], give_up: {zz_unknown: 1}}}\n"},
	"services.NAME.stop":                {"hinit.yaml", "services: {web: {command: [x], stop: {zz_unknown: 1}}}\n"},
	"services.NAME.ready":               {"hinit.yaml", "services: {web: {command: [x], ready: {zz_unknown: 1}}}\n"},
	"services.NAME.log":                 {"hinit.yaml", "services: {web: {command: [x], log: {zz_unknown: 1}}}\n"},
	"templates.NAME":                    {"hinit.yaml", "templates: {gw: {command: [x], zz_unknown: 1}}\n"},
	"templates.NAME.overrides.INSTANCE": {"hinit.yaml", "templates: {gw: {command: [x], overrides: {a: {zz_unknown: 1}}}}\n"},
	"boot":                              {"hinit.yaml", "boot: [{name: a, command: [x], zz_unknown: 1}]\n"},
	"reconcile":                         {"hinit.yaml", "templates: {gw: {command: [x]}}\nreconcile: {home: /h, template: gw, zz_unknown: 1}\n"},
	"Drop-ins: hinit.d/*.yaml":          {"drop-in", "zz_unknown: 1\n"},
	"service.yaml":                      {"service.yaml", "command: [x]\nzz_unknown: 1\n"},
	"service.yaml (template reference)": {"service.yaml", "template: gw\ninstance: a\nzz_unknown: 1\n"},
}

var expectedRE = regexp.MustCompile(`zz_unknown: (?:unknown key|not allowed in a template reference) \(expected (?:one of|only) ([^)]*)\)`)

// accepted runs p and returns the keys the parser names as expected there.
func accepted(t *testing.T, p probe) []string {
	t.Helper()
	var err error
	switch p.kind {
	case "hinit.yaml":
		_, err = Parse("hinit.yaml", []byte(p.yaml))
	case "drop-in":
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"hinit.yaml": "", "hinit.d/x.yaml": p.yaml})
		_, err = Load(filepath.Join(dir, "hinit.yaml"))
	case "service.yaml":
		_, _, err = ParseService("service.yaml", []byte(p.yaml), "")
	}
	if err == nil {
		t.Fatalf("probe %q: no error", p.yaml)
	}
	m := expectedRE.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("probe %q: no unknown-key message in %q", p.yaml, err)
	}
	keys := strings.Split(m[1], ", ")
	slices.Sort(keys)
	return keys
}

var everyKeyRE = regexp.MustCompile("^every key of `([^`]+)`(?: but `([^`]+)`)?$")

// documented reads docs/config.md: heading (backticks dropped) -> the keys
// of its table, "every key of `S` but `K`" rows expanded.
func documented(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var section string
	var includes [][2]string // section, includes S but K
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			section = strings.ReplaceAll(h, "`", "")
			continue
		}
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		if m := everyKeyRE.FindStringSubmatch(cell); m != nil {
			includes = append(includes, [2]string{section, m[1] + "\x00" + m[2]})
		} else if k, ok := strings.CutPrefix(cell, "`"); ok && strings.HasSuffix(k, "`") {
			out[section] = append(out[section], strings.TrimSuffix(k, "`"))
		}
	}
	for _, inc := range includes {
		from, but, _ := strings.Cut(inc[1], "\x00")
		for _, k := range out[from] {
			if k != but {
				out[inc[0]] = append(out[inc[0]], k)
			}
		}
	}
	for s := range out {
		slices.Sort(out[s])
	}
	return out
}

// TestConfigDoc: every section of docs/config.md lists exactly the keys the
// parser accepts there, and every key a decoder switch accepts is
// documented somewhere.
func TestConfigDoc(t *testing.T) {
	doc := documented(t)
	for section, p := range sections {
		if got, want := doc[section], accepted(t, p); !slices.Equal(got, want) {
			t.Errorf("docs/config.md section %q lists %q, the parser accepts %q", section, got, want)
		}
	}
	all := map[string]bool{}
	for _, keys := range doc {
		for _, k := range keys {
			all[k] = true
		}
	}
	for _, k := range switchKeys(t) {
		if !all[k] {
			t.Errorf("key %q is accepted by the parser but not in docs/config.md", k)
		}
	}
}

// switchKeys returns the string cases of every switch on a mapping entry's
// key (switch e.key / f.key) in the package's non-test files.
func switchKeys(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	var keys []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			if sel, ok := sw.Tag.(*ast.SelectorExpr); !ok || sel.Sel.Name != "key" {
				return true
			}
			for _, st := range sw.Body.List {
				for _, e := range st.(*ast.CaseClause).List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						k, _ := strconv.Unquote(lit.Value)
						keys = append(keys, k)
					}
				}
			}
			return true
		})
	}
	if len(keys) < 40 {
		t.Fatalf("found only %d keys in switch statements: %q", len(keys), keys)
	}
	return keys
}
