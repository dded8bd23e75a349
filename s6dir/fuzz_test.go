package s6dir

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"hinit/launch"
	"hinit/signame"
	"hinit/trust"
)

// FuzzRead writes a servicedir from fuzzed file contents and reads it:
// nothing panics, every accepted value is within its documented range,
// every error is one line.
func FuzzRead(f *testing.F) {
	f.Add(uint16(0o755), "3\n", "5000\n", "", "", "TERM\n", "x", true, uint16(0o755))
	f.Add(uint16(0o644), "", "", "", "", "", "gateway-coder", false, uint16(0))
	f.Add(uint16(0o700), "  4  ", "+10", "-0", "4096", "SIGusr1", "a\nb", true, uint16(0o644))
	f.Add(uint16(0o755), "2", "99999999999", "1e3", "4097", "34", "é", false, uint16(0o755))
	f.Add(uint16(0o755), "1023", "2147483647", "2147483648", "0", "sig", "..", false, uint16(0o755))
	f.Fuzz(func(t *testing.T, runMode uint16, nfd, tk, tf, mdt, ds, name string, finish bool, logMode uint16) {
		dir := t.TempDir()
		w := func(p, s string, mode os.FileMode) {
			if err := os.WriteFile(dir+"/"+p, []byte(s), mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir+"/"+p, mode)
		}
		w("run", "#!/bin/sh\n", os.FileMode(runMode&0o777))
		for p, s := range map[string]string{"notification-fd": nfd, "timeout-kill": tk, "timeout-finish": tf, "max-death-tally": mdt, "down-signal": ds} {
			if s != "" {
				w(p, s, 0o644)
			}
		}
		if finish {
			w("finish", "", 0o755)
		}
		if logMode != 0 {
			os.Mkdir(dir+"/log", 0o755)
			w("log/run", "", os.FileMode(logMode&0o777))
		}
		dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(dfd)
		var j trust.Judge
		d, err := Read(dfd, "/scan/"+name, &j)
		if err != nil {
			if d != nil {
				t.Fatalf("Dir %+v with error %v", d, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") && !strings.ContainsAny(name, "\n\r") {
				t.Fatalf("multi-line error %q", err)
			}
			if runMode&0o111 != 0 && err == ErrNotS6 {
				t.Fatalf("executable run refused: %v", err)
			}
			return
		}
		if d == nil {
			t.Fatal("nil Dir without error")
		}
		if d.NotificationFD != 0 && (d.NotificationFD < 3 || d.NotificationFD > launch.MaxFD) {
			t.Fatalf("notification-fd %d", d.NotificationFD)
		}
		if d.TimeoutKill < 0 || d.TimeoutFinish < 0 || d.MaxDeathTally < 0 || d.MaxDeathTally > 4096 {
			t.Fatalf("bad %+v", d)
		}
		if d.DownSignal != "" {
			sig, err := signame.Parse(d.DownSignal)
			if err != nil || signame.Name(sig) != d.DownSignal {
				t.Fatalf("down-signal %q does not round-trip: %v %v", d.DownSignal, sig, err)
			}
		}
		if d.Finish != finish {
			t.Fatalf("finish %v, want %v", d.Finish, finish)
		}
	})
}
