package hostile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/internal/testprog"
)

// Item 5 of issue 14: entries the scandir ignores (a symlink in place of a
// dir, a FIFO) used to appear only in hinit's log. They show in status now,
// at most services_max of them, so 5000 symlinks cost neither a status row
// nor a log line each; hermes can remove its own, never through the link.
func TestIgnoredEntriesBounded(t *testing.T) {
	p := startInit(t, "user: \"10000\"\nservices_max: 50\n")
	p.exposeSelf()
	target := filepath.Join(p.dir, "target")
	must(t, os.Mkdir(target, 0o755))
	must(t, os.WriteFile(filepath.Join(target, "keep"), nil, 0o644))
	asHermes(t, `mkfifo "$1/pipe" && ln -s "$2" "$1/linked"`, p.scan, target)
	testprog.WaitFor(t, 10*time.Second, "pipe and linked in status", func() bool {
		_, a := p.status("pipe")
		_, b := p.status("linked")
		return a && b
	})
	for i := range 5000 {
		n := filepath.Join(p.scan, fmt.Sprintf("l%04d", i))
		must(t, os.Symlink("/", n))
		must(t, unix.Lchown(n, int(hermes.Uid), int(hermes.Gid)))
	}
	testprog.WaitFor(t, 20*time.Second, "the summary line", func() bool {
		return strings.Contains(p.out.String(), "more than 50 entries are ignored")
	})
	if code, _, errOut := p.hsvc(nil, "check"); code != 0 {
		t.Fatalf("hsvc check: exit %d: %s", code, errOut)
	}
	code, out, errOut := p.hsvc(hermes, "status", "--json")
	if code != 0 {
		t.Fatalf("hsvc status as hermes: exit %d: %s", code, errOut)
	}
	var st struct{ Services []svcStatus }
	must(t, json.Unmarshal([]byte(out), &st))
	if len(st.Services) > 50 {
		t.Errorf("status lists %d rows, want at most services_max (50)", len(st.Services))
	}
	if n := strings.Count(p.out.String(), "ignoring entry"); n > 51 {
		t.Errorf("hinit logged %d lines about ignored entries, want at most 51", n)
	}

	code, _, errOut = p.hsvc(hermes, "status", "pipe")
	if code != 0 {
		t.Fatalf("hsvc status pipe: exit %d: %s", code, errOut)
	}
	code, _, errOut = p.hsvc(hermes, "start", "linked")
	if code != 1 || !strings.Contains(errOut, "ignored: a symlink, never followed") {
		t.Fatalf("hsvc start linked: exit %d: %q", code, errOut)
	}
	if code, _, errOut = p.hsvc(hermes, "unregister", "linked"); code != 0 {
		t.Fatalf("hsvc unregister linked: exit %d: %s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(p.scan, "linked")); !os.IsNotExist(err) {
		t.Errorf("linked is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, "keep")); err != nil {
		t.Errorf("unregister reached through the link: %v", err)
	}
}
