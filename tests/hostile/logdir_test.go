package hostile

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// Trial 2 of issue 14: root rotation through a symlinked log dir. A root
// service logs under a hermes-writable parent; the hermes user swaps the
// log dir for a symlink to a dir only root may write; root's rotation must
// never rename or delete anything there.
func TestLogDirSwappedForSymlink(t *testing.T) {
	needRoot(t)
	base, err := os.MkdirTemp("", "hostile-logs-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	must(t, os.Chmod(base, 0o755))
	data := filepath.Join(base, "data") // $HERMES_HOME: the hermes user's
	for _, d := range []string{data, filepath.Join(data, "logs")} {
		must(t, os.Mkdir(d, 0o755))
		must(t, os.Chown(d, int(hermes.Uid), int(hermes.Gid)))
	}
	victim := filepath.Join(base, "victim") // root's, 0755
	must(t, os.Mkdir(victim, 0o755))
	victimFiles := map[string]string{"current": "root's current\n", "@20000101T000000.000000Z.s": "a\n",
		"@20000101T000000.000001Z.s": "b\n", "@20000101T000000.000002Z.s": "c\n"}
	for name, text := range victimFiles {
		must(t, os.WriteFile(filepath.Join(victim, name), []byte(text), 0o644))
	}
	logs := filepath.Join(data, "logs", "chatty") // created by root, as root's service's

	count := filepath.Join(base, "count")
	// Each start prints 100 lines of ~100 bytes (rotating 4 KiB files
	// several times), then "burst N" with its start number, then idles.
	script := fmt.Sprintf(`n=$(($(cat %[1]s 2>/dev/null || echo 0)+1)); echo $n > %[1]s; `+
		`i=0; while [ $i -lt 100 ]; do i=$((i+1)); echo "line $i %[2]s"; done; echo "burst $n"; exec sleep 100000`,
		count, strings.Repeat("x", 80))
	config := fmt.Sprintf("services:\n  chatty:\n    command: [/bin/sh, -c, %q]\n    user: root\n"+
		"    log: {dir: %q, max_size: 4KiB, keep: 1}\n", script, logs)
	p := startInit(t, config)
	testprog.WaitFor(t, 20*time.Second, "burst 1 in the log", func() bool { return dirHas(logs, "burst 1") })

	moved := logs + ".moved"
	asHermes(t, `mv "$1" "$2" && ln -s "$3" "$1"`, logs, moved, victim)
	if code, _, errOut := p.hsvc(nil, "restart", "chatty"); code != 0 {
		t.Fatalf("hsvc restart chatty: exit %d: %s", code, errOut)
	}
	victimNow := func() map[string]string {
		got := map[string]string{}
		ents, err := os.ReadDir(victim)
		must(t, err)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(victim, e.Name()))
			got[e.Name()] = string(b)
		}
		return got
	}
	testprog.WaitFor(t, 20*time.Second, "burst 2 written in the dir opened before the swap, or the victim touched", func() bool {
		return dirHas(moved, "burst 2") || !maps.Equal(victimNow(), victimFiles)
	})
	if got := victimNow(); !maps.Equal(got, victimFiles) {
		t.Fatalf("root's rotation touched the symlink's target: it holds %q, want %q", got, victimFiles)
	}
}

// dirHas reports whether any file in dir contains s.
func dirHas(dir, s string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}
