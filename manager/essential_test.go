package manager_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"hinit/internal/testprog"
	mt "hinit/manager/managertest"
)

// Only root's word makes a service essential. A service.yaml the hermes
// user wrote in its scandir with essential: true and an exit 3 shut the
// container down with status 3 (seen as uid 10000 with hinit as PID 1 of
// a PID namespace): a shutdown hsvc gives root only. Its definition is not
// essential now; a template's essential is hinit.yaml's, whoever
// registered the instance.
func TestEssentialOnlyFromRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the dirs must be owned by another user")
	}
	const cfg = "templates:\n  job:\n    command: [/bin/sh, -c, \"exit 4\"]\n    restart: never\n    essential: true\n"
	tests := []struct {
		name  string
		owner int // of the dir and its service.yaml
		yaml  string
		want  []int // shutdowns requested
	}{
		{"hermes' own definition", 10000, "command: [/bin/sh, -c, \"exit 3\"]\nrestart: never\nessential: true\n", nil},
		{"root's definition", 0, "command: [/bin/sh, -c, \"exit 3\"]\nrestart: never\nessential: true\n", []int{3}},
		{"hermes' instance of root's essential template", 10000, "{template: job, instance: a}\n", []int{4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := mt.Start(t, cfg, nil)
			tmp := filepath.Join(f.Scandir, ".svc.tmp")
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(tmp, "service.yaml")
			if err := os.WriteFile(file, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{file, tmp} {
				if err := os.Lchown(p, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			name := "svc"
			if tc.owner == 10000 && tc.yaml[0] == '{' {
				name = "job-a"
			}
			if err := os.Rename(tmp, filepath.Join(f.Scandir, name)); err != nil {
				t.Fatal(err)
			}
			testprog.WaitFor(t, 10*time.Second, name+" exited", func() bool { return f.State(name) == "exited" })
			if got := f.Shutdowns(); !slices.Equal(got, tc.want) {
				t.Errorf("shutdowns requested %v, want %v", got, tc.want)
			}
			const ignored = "essential: true ignored: only a definition root wrote may end the container"
			if said := strings.Contains(f.Logged.String(), ignored); said != (tc.owner == 10000 && tc.want == nil) {
				t.Errorf("warning %q said %v; the log:\n%s", ignored, said, f.Logged.String())
			}
		})
	}
}
