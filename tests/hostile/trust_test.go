package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// Trial 1 of issue 14: root through a root-owned, hermes-writable slot.
// Only the dir's owner used to be checked, so the hermes user could rewrite
// a root service's definition and have `user: root` honoured.

// rootDefinition is a service.yaml that records who ran it in marker.
func rootDefinition(marker string) string {
	return fmt.Sprintf("command: [/bin/sh, -c, 'id -u > %s; exec sleep 100000']\nuser: root\n", marker)
}

// TestTrustWritableSlot: root makes service/.rw mode 0777 holding a
// service.yaml saying `user: root` and renames it in; hermes replaces
// service.yaml; the next start must not run hermes's command as root.
func TestTrustWritableSlot(t *testing.T) {
	p := startInit(t, "")
	slot := filepath.Join(p.scan, "rw")
	tmp := filepath.Join(p.scan, ".rw")
	must(t, os.Mkdir(tmp, 0o755))
	must(t, os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte(rootDefinition(filepath.Join(p.dir, "root-ran"))), 0o644))
	must(t, os.Chmod(tmp, 0o777))
	must(t, os.Rename(tmp, slot))

	pwned := filepath.Join(p.dir, "hermes-ran")
	asHermes(t, `printf %s "$1" > "$2/.new" && mv -f "$2/.new" "$2/service.yaml"`, rootDefinition(pwned), slot)
	p.hsvc(nil, "restart", "rw")
	p.refusedOrRan(t, "rw", slot+" is writable by every user", pwned)
}

// TestTrustWritableFile: a root-owned 0755 dir holding a service.yaml
// that is group- and other-writable; hermes rewrites the file in place.
func TestTrustWritableFile(t *testing.T) {
	p := startInit(t, "")
	tmp := filepath.Join(p.scan, ".wf")
	must(t, os.Mkdir(tmp, 0o755))
	yaml := filepath.Join(tmp, "service.yaml")
	must(t, os.WriteFile(yaml, []byte(rootDefinition(filepath.Join(p.dir, "root-ran"))), 0o644))
	must(t, os.Chmod(yaml, 0o666))
	must(t, os.Rename(tmp, filepath.Join(p.scan, "wf")))

	pwned := filepath.Join(p.dir, "hermes-ran")
	asHermes(t, `printf %s "$1" > "$2"`, rootDefinition(pwned), filepath.Join(p.scan, "wf", "service.yaml"))
	p.hsvc(nil, "restart", "wf")
	p.refusedOrRan(t, "wf", "service.yaml is writable by every user", pwned)
}

// refusedOrRan waits until name's status gives the refusal reason, or
// until hermes's command ran (which is how the hole showed), and fails
// unless it was refused and hermes's command never ran as root.
func (p *initProc) refusedOrRan(t *testing.T, name, reason, pwned string) {
	t.Helper()
	var st svcStatus
	testprog.WaitFor(t, 15*time.Second, name+" refused in status, or hermes's command run", func() bool {
		if _, err := os.Stat(pwned); err == nil {
			return true
		}
		st, _ = p.status(name)
		return strings.Contains(st.Reason, reason)
	})
	if b, err := os.ReadFile(pwned); err == nil {
		testprog.WaitFor(t, 5*time.Second, "the uid in "+pwned, func() bool {
			b, _ = os.ReadFile(pwned)
			return strings.HasSuffix(string(b), "\n")
		})
		t.Fatalf("hermes's definition ran as uid %s (want: refused, never run as root)", strings.TrimSpace(string(b)))
	}
	if st.State == "up" || st.PID != 0 {
		t.Fatalf("%s is %s with pid %d, want not running", name, st.State, st.PID)
	}
}

// TestTrustYAMLDirRenamed: the hermes user owns the scandir, so it may
// rename root's service dirs. Root defines a service whose command is a
// script beside its service.yaml, by path; hermes renames root's dir away
// (root's definition lives on under the new name) and puts its own dir,
// with its own script, at the old name; root starts the service. The
// script that runs is hermes's: it must run as hermes, never as root.
func TestTrustYAMLDirRenamed(t *testing.T) {
	p := startInit(t, "")
	slot, tmp := filepath.Join(p.scan, "svc"), filepath.Join(p.scan, ".svc")
	marker := filepath.Join(p.dir, "uids")
	script := "#!/bin/sh\nid -u >>" + marker + "\nexec sleep 100000\n"
	must(t, os.Mkdir(tmp, 0o755))
	must(t, os.WriteFile(filepath.Join(tmp, "start.sh"), []byte("#!/bin/sh\nexec sleep 100000\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(tmp, "service.yaml"),
		[]byte("command: ["+filepath.Join(slot, "start.sh")+"]\nuser: root\nrestart: never\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(tmp, "down"), nil, 0o644))
	must(t, os.Rename(tmp, slot))
	testprog.WaitFor(t, 10*time.Second, "svc registered", func() bool { _, ok := p.status("svc"); return ok })

	asHermes(t, `mv "$1" "$1.stolen" && mkdir "$1" && printf %s "$2" >"$1/start.sh" && chmod 755 "$1/start.sh"`, slot, script)
	testprog.WaitFor(t, 10*time.Second, "svc.stolen registered", func() bool { _, ok := p.status("svc.stolen"); return ok })
	if code, _, errOut := p.hsvc(nil, "start", "svc.stolen"); code != 0 {
		t.Fatalf("hsvc start svc.stolen: exit %d: %s", code, errOut)
	}
	var b []byte
	testprog.WaitFor(t, 10*time.Second, "hermes's script to run", func() bool {
		b, _ = os.ReadFile(marker)
		return strings.HasSuffix(string(b), "\n")
	})
	if got := string(b); got != "10000\n" {
		t.Fatalf("hermes's script ran as uid %q, want 10000 only", got)
	}
}
