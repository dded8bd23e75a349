package docker

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// buildDerived builds an image FROM the image under test with worker.yaml
// as /etc/hinit/hinit.d/50-worker.yaml and `RUN hinit check-config`, the
// way docs/image.md says; it returns the tag and how docker build ended.
func buildDerived(t *testing.T, worker string) (string, result) {
	t.Helper()
	dir := t.TempDir()
	dockerfile := "FROM " + image + "\nCOPY worker.yaml /etc/hinit/hinit.d/50-worker.yaml\nRUN hinit check-config && echo config checked\n"
	for name, content := range map[string]string{"Dockerfile": dockerfile, "worker.yaml": worker} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tag := name(t) + ":derived"
	r := dockerCmd(t, "build", "--force-rm", "--label", runLabel, "-t", tag, dir)
	t.Cleanup(func() {
		exec.Command("docker", "rmi", "-f", tag).Run()
		// A failed build leaves its last step's image untagged: the
		// " ---> ID" after FROM's own.
		if ids := stepIDs.FindAllStringSubmatch(r.stdout, -1); r.code != 0 && len(ids) > 1 {
			exec.Command("docker", "rmi", ids[len(ids)-1][1]).Run()
		}
	})
	return tag, r
}

// stepIDs finds the image of each step in the legacy builder's output.
var stepIDs = regexp.MustCompile(`(?m)^ ---> ([0-9a-f]{12})$`)

// A derived image adds a service with a drop-in and keeps the image's
// hinit.yaml: check-config passes at build time, the service runs beside
// the image's own; a drop-in redefining one of the image's services fails
// the build with both places named.
func TestDerivedImageDropIn(t *testing.T) {
	needEngine(t)
	tag, r := buildDerived(t, "services:\n  worker:\n    command: [sleep, \"3600\"]\n    restart: on-failure\n")
	if r.code != 0 || !strings.Contains(r.stdout, "/etc/hinit/hinit.d/50-worker.yaml: ok") {
		t.Fatalf("docker build: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	n := name(t)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", "-v", n).Run() })
	must(t, append(append([]string{"run", "-d"}, baseOpts(t, n)...), tag, "sleep", "infinity")...)
	c := &ctr{t: t, id: n}
	c.booted()
	c.waitState("worker", "up", 20*time.Second, up)
	if _, ok := c.status("dashboard"); !ok {
		t.Error("the image's own dashboard service is gone")
	}

	_, r = buildDerived(t, "services:\n  dashboard:\n    command: [sleep, \"1\"]\n")
	want := "/etc/hinit/hinit.d/50-worker.yaml:2: services.dashboard: defined twice (first at /etc/hinit/hinit.yaml:"
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("docker build with a duplicate: exit %d, want non-zero and %q in:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}
