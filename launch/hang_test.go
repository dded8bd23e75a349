package launch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"hinit/internal/hangfs"
)

// TestBuildOnAHungVolumeTakesNoSignal: a program's working dir on a volume
// that stops answering holds Build's stat in the kernel (a gateway's
// workdir is $HERMES_HOME). The thread it holds blocks every signal but
// the faults meanwhile, so that a SIGCHLD or SIGTERM for hinit goes to
// another.
func TestBuildOnAHungVolumeTakesNoSignal(t *testing.T) {
	h := hangfs.Mount(t)
	wd := filepath.Join(h.Dir, "home")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	h.HangAll()
	built := make(chan error, 1)
	go func() {
		_, err := Program{Argv: []string{"/bin/true"}, Env: map[string]string{"PATH": "/usr/bin:/bin"}, Workdir: wd}.Build()
		built <- err
	}()
	var tid int
	select {
	case tid = <-h.Stuck():
	case err := <-built:
		t.Fatalf("Build returned (%v) without asking the hung volume", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Build did not reach the hung volume within 10s")
	}
	hangfs.CheckQuiet(t, tid, "Build's stat")
	h.Release()
	if err := <-built; err != nil {
		t.Errorf("Build once the volume answers: %v", err)
	}
}
