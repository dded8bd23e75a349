package docs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"gopkg.in/yaml.v3"
)

// pages are the README and every page of docs/.
func pages(t *testing.T) []string {
	t.Helper()
	md, err := filepath.Glob("*.md")
	if err != nil || len(md) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append(md, "../README.md")
}

var (
	linkRE  = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	issueRE = regexp.MustCompile(`(?i)\bissues? #?[0-9]+|\bissues show\b`)
)

// The README and docs stand on their own: every relative link resolves to a
// file of the repository, nothing points outside it, and no internal issue
// numbers (hermes#N names the public hermes tracker and is fine).
func TestDocsSelfContained(t *testing.T) {
	root, _ := filepath.Abs("..")
	for _, page := range pages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			abs, _ := filepath.Abs(filepath.Join(filepath.Dir(page), target))
			if !strings.HasPrefix(abs, root+string(filepath.Separator)) {
				t.Errorf("%s: link %q leaves the repository", page, target)
			} else if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
			} else if anchor := strings.TrimPrefix(m[2], "#"); anchor != "" && !slices.Contains(anchors(t, abs), anchor) {
				t.Errorf("%s: link %q: no heading #%s there", page, target, anchor)
			}
		}
		for _, bad := range []string{"../shared", "SPEC.md", "SPEC §"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s mentions %q, which is not in the repository", page, bad)
			}
		}
		if m := issueRE.FindString(text); m != "" {
			t.Errorf("%s cites an internal issue: %q", page, m)
		}
	}
}

// anchors are the GitHub anchors of the headings of a markdown file:
// lowercased, spaces to "-", everything but letters, digits, "-" and "_"
// dropped.
func anchors(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// manifests decodes every YAML block of kubernetes.md.
func manifests(t *testing.T) []map[string]any {
	t.Helper()
	data, err := os.ReadFile("kubernetes.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(data, -1) {
		dec := yaml.NewDecoder(bytes.NewReader(block[1]))
		for {
			var m map[string]any
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("kubernetes.md: %v", err)
			}
			out = append(out, m)
		}
	}
	return out
}

// get walks m along keys (string keys, int indexes).
func get(m any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			mm, _ := m.(map[string]any)
			m = mm[k]
		case int:
			l, _ := m.([]any)
			if k >= len(l) {
				return nil
			}
			m = l[k]
		}
	}
	return m
}

// kubernetes.md: each StatefulSet's serviceName is a headless Service of
// the page, every container sets resources, and one variant is the
// restricted profile written out: non-root, seccomp RuntimeDefault, no
// privilege escalation, every capability dropped and none added.
func TestKubernetesManifests(t *testing.T) {
	headless := map[string]bool{}
	var sets []map[string]any
	for _, m := range manifests(t) {
		switch m["kind"] {
		case "Service":
			if get(m, "spec", "clusterIP") == "None" {
				headless[get(m, "metadata", "name").(string)] = true
			}
		case "StatefulSet":
			sets = append(sets, m)
		}
	}
	if len(sets) != 2 {
		t.Fatalf("%d StatefulSets in kubernetes.md, want 2 (root and restricted)", len(sets))
	}
	restricted := 0
	for i, s := range sets {
		if name, _ := get(s, "spec", "serviceName").(string); !headless[name] {
			t.Errorf("StatefulSet %d: serviceName %q is not a headless Service of the page (%v)", i, name, headless)
		}
		pod := get(s, "spec", "template", "spec")
		ctr := get(pod, "containers", 0)
		if get(ctr, "resources", "requests", "memory") == nil || get(ctr, "resources", "limits", "memory") == nil {
			t.Errorf("StatefulSet %d: container without memory requests and limits", i)
		}
		if get(pod, "securityContext", "runAsNonRoot") != true {
			continue
		}
		restricted++
		caps := get(ctr, "securityContext", "capabilities")
		if uid, _ := get(pod, "securityContext", "runAsUser").(int); uid == 0 ||
			get(pod, "securityContext", "seccompProfile", "type") != "RuntimeDefault" ||
			get(ctr, "securityContext", "allowPrivilegeEscalation") != false ||
			get(caps, "drop", 0) != "ALL" || get(caps, "add") != nil {
			t.Errorf("StatefulSet %d is not the restricted profile: pod %v, container %v", i,
				get(pod, "securityContext"), get(ctr, "securityContext"))
		}
	}
	if restricted != 1 {
		t.Errorf("%d restricted (runAsNonRoot) StatefulSets, want 1", restricted)
	}
}
