package s6cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDifferential runs testdata/differential.sh against real s6-svscan
// (Debian's s6) and against hinit with hsvc's s6 names, and requires the
// two transcripts (exit codes, s6-svstat lines modulo pids and seconds,
// s6-svwait outcomes) to be the same.
func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two supervisors for a few seconds each")
	}
	if _, err := exec.LookPath("s6-svscan"); err != nil {
		t.Skip("SKIPPED LOUDLY: s6-svscan is not installed (apt-get install s6), so hinit cannot be compared with s6")
	}
	bin := buildCommands(t)
	script, _ := filepath.Abs("testdata/differential.sh")
	run := func(mode string, path string, extra ...string) string {
		work, err := os.MkdirTemp("", "s6diff-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(work)
		cmd := exec.Command(script, append([]string{mode, work}, extra...)...)
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.Output()
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(work, "supervisor.log"))
			t.Fatalf("%s: %v\n%s\nsupervisor log:\n%s", mode, err, out, log)
		}
		return string(out)
	}
	want := run("s6", os.Getenv("PATH"))
	got := run("hinit", bin+":"+os.Getenv("PATH"), filepath.Join(bin, "hinit"))
	if got != want {
		t.Errorf("hinit differs from s6:\n%s", lineDiff(want, got))
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "TIMEOUT") || strings.Contains(l, "NO") {
			t.Errorf("a step did not happen: %s", l)
		}
	}
}

// TestHermesClient runs testdata/hermes-client.sh: what hermes'
// S6ServiceManager does to a profile gateway (register down, start,
// is_running, _supervised_pid, stop with its planned-stop marker, restart,
// unregister), against hinit and a fake gateway.
func TestHermesClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hinit for a few seconds")
	}
	bin := buildCommands(t)
	work, err := os.MkdirTemp("", "s6hermes-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	os.Chmod(work, 0o755) // the gateway runs as nobody when the test runs as root
	cmd := exec.Command("testdata/hermes-client.sh", work, filepath.Join(bin, "hinit"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(work, "supervisor.log"))
		t.Fatalf("%v\n%s\nhinit's log:\n%s", err, out, log)
	}
	t.Logf("\n%s", out)
}

// buildCommands builds hinit and hsvc into a dir readable by everyone (so
// that nobody can run them, unlike t.TempDir), with hsvc's s6 names.
func buildCommands(t *testing.T) string {
	t.Helper()
	bin, err := os.MkdirTemp("", "s6diff-bin-") // reachable by nobody, unlike t.TempDir
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	os.Chmod(bin, 0o755)
	for _, pkg := range []string{"hinit", "hsvc"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, pkg), "hinit/cmd/"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	for name := range commands {
		if err := os.Symlink("hsvc", filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// lineDiff shows the lines of two transcripts side by side where they
// differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		mark := "  "
		if wl != gl {
			mark = "!="
		}
		b.WriteString(mark + " s6:    " + wl + "\n   hinit: " + gl + "\n")
	}
	return b.String()
}
