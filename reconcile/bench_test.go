package reconcile

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hinit/gwstate"
)

// BenchmarkBootHardLinked is one boot reconcile of services_max profiles
// whose gateway_state.json, hinit's record and lifecycle sentinel are one
// 4 MiB file hard-linked into each, with a 1 MiB config.yaml likewise: what
// the hermes user can make with 10 MB of disk (docs/decisions.md, "A boot
// reads a bounded amount of the profiles' state files"). It is timed, not
// tested: go test -run X -bench BootHardLinked -benchtime 1x ./reconcile
func BenchmarkBootHardLinked(b *testing.B) {
	w := newWorld(b)
	big, lc, cfg := filepath.Join(w.home, "big.json"), filepath.Join(w.home, "lc.json"), filepath.Join(w.home, "cfg.yaml")
	pad := strings.Repeat("0,", (4<<20-100)/2)
	writeFile(b, big, `{"gateway_state":"running","x":[`+pad+`0]}`)
	writeFile(b, lc, `{"phase":"running","x":[`+pad+`0]}`)
	writeFile(b, cfg, "agent:\n  restart_drain_timeout: 600\n# "+strings.Repeat("x", 1<<20-40)+"\n")
	for i := 0; i < 999; i++ {
		p := filepath.Join(w.home, "profiles", fmt.Sprintf("p%04d", i))
		if err := os.MkdirAll(filepath.Join(p, "state"), 0o755); err != nil {
			b.Fatal(err)
		}
		writeFile(b, filepath.Join(p, gwstate.SoulFile), "")
		for target, name := range map[string]string{big: gwstate.StateFileName, big + " ": gwstate.RecordName, lc: gwstate.LifecycleFile, cfg: ConfigFile} {
			if err := os.Link(strings.TrimSpace(target), filepath.Join(p, name)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		actions, err := Run(Options{Home: w.home, Scandir: w.scan, Template: "gateway", Slots: 1000,
			Now: func() time.Time { return testNow }, Logger: slog.New(slog.DiscardHandler)})
		if err != nil || len(actions) != 1000 {
			b.Fatalf("%d actions, %.300v", len(actions), err)
		}
		b.Logf("reconcile.Run of %d profiles: %v", len(actions), time.Since(start))
	}
}
