package manager_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	mt "hinit/manager/managertest"
)

// s6-svscanctl -a (a list request naming the scandir) is "scan now": a dir
// made in the scandir before it is a service when it returns. hermes makes
// a gateway's dir, calls s6-svscanctl -a, then s6-svc -u on the dir: before,
// the answer came at once, and the s6-svc could find no service there yet
// ("supervisor not listening", exit 100) whenever the watcher had not read
// the dir in between.
func TestScanNowCatchesUp(t *testing.T) {
	f := mt.Start(t, "", nil)
	scan := f.ScanNow()
	for i := range 100 {
		name := fmt.Sprintf("svc%d", i)
		tmp := filepath.Join(f.Scandir, "."+name+".tmp")
		if err := os.Mkdir(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "service.yaml"), []byte("command: [sleep, '60']\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(f.Scandir, name)); err != nil {
			t.Fatal(err)
		}
		if resp := f.Do(scan); !resp.OK {
			t.Fatalf("scan now: %+v", resp)
		}
		if f.Status(name) == nil {
			t.Fatalf("%s (round %d) is no service right after s6-svscanctl -a returned", name, i)
		}
	}
}
