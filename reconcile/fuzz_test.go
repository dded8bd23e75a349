package reconcile

import (
	"hinit/gwstate"

	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzBootLog runs Run over a fuzzed home: the boot log's prior size, the
// root and one profile's state file content, and which paths are planted
// as symlinks to an outside dir. Whatever the input: no panic, the outside
// dir is untouched, nothing appears beside home and the scandir, and when
// the boot log could be written it ends with well-formed lines.
func FuzzBootLog(f *testing.F) {
	f.Add(uint32(0), []byte(`{"gateway_state":"running"}`), []byte(`{"desired_state":"stopped"}`), uint8(0))
	f.Add(uint32(bootLogMax), []byte(`{"gateway_state":"run\nning"}`), []byte(`{`), uint8(0))
	f.Add(uint32(bootLogMax-1), []byte(`[]`), []byte(`{"gateway_state":"draining"}`), uint8(0xff))
	f.Add(uint32(5), []byte(``), []byte("\xff\xfe"), uint8(1))
	f.Add(uint32(bootLogMax*2), []byte(`null`), []byte(`{"gateway_state":"degraded"}`), uint8(2|8))
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, logSize uint32, rootState, profState []byte, links uint8) {
		root, err := os.MkdirTemp(base, "w")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(root)
		w := &world{home: root + "/home", scan: root + "/scan", outside: root + "/outside"}
		plantWorld(t, w, logSize%(3*bootLogMax), rootState, profState, links)
		before := snapshot(t, w.outside)
		actions, err := w.run(t, true, "running")
		if err != nil {
			t.Fatal(err)
		}
		assertUnchanged(t, before, w.outside)
		if got := strings.Join(entries(t, root), ","); got != "home,outside,scan" {
			t.Fatalf("written outside home: %s", got)
		}
		checkBootLog(t, w, actions)
	})
}

// plantWorld builds the fuzzed tree. Bits of links plant a symlink to
// outside at: 1 logs, 2 the boot log, 4 boot log .1, 8 the root state file,
// 16 the profile's state file, 32 the profile's gateway.pid.
func plantWorld(t *testing.T, w *world, logSize uint32, rootState, profState []byte, links uint8) {
	for _, d := range []string{w.home, w.scan, w.outside, w.outside + "/logs", w.home + "/profiles", w.home + "/profiles/p"} {
		os.Mkdir(d, 0o755)
	}
	os.WriteFile(w.outside+"/victim", []byte("untouched"), 0o644)
	os.WriteFile(w.home+"/profiles/p/"+gwstate.SoulFile, nil, 0o644)
	put := func(bit uint8, p string, write func()) {
		if links&bit != 0 {
			os.Symlink(w.outside+"/victim", p)
			return
		}
		write()
	}
	logs := w.home + "/logs"
	if links&1 != 0 {
		os.Symlink(w.outside+"/logs", logs)
	} else {
		os.Mkdir(logs, 0o755)
		put(2, logs+"/"+BootLog, func() { sparse(t, logs+"/"+BootLog, int64(logSize)) })
		put(4, logs+"/"+BootLog+".1", func() {})
	}
	put(8, w.home+"/"+gwstate.StateFileName, func() { os.WriteFile(w.home+"/"+gwstate.StateFileName, rootState, 0o644) })
	put(16, w.home+"/profiles/p/"+gwstate.StateFileName, func() { os.WriteFile(w.home+"/profiles/p/"+gwstate.StateFileName, profState, 0o644) })
	put(32, w.home+"/profiles/p/gateway.pid", func() {})
}

// sparse makes a file of size bytes without writing them.
func sparse(t *testing.T, p string, size int64) {
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// checkBootLog checks the lines Run appended, when it could.
func checkBootLog(t *testing.T, w *world, actions []Action) {
	b, err := os.ReadFile(filepath.Join(w.home, "logs", BootLog))
	st, lerr := os.Lstat(filepath.Join(w.home, "logs", BootLog))
	if err != nil || lerr != nil || !st.Mode().IsRegular() {
		return // a planted link: nothing written, warned instead
	}
	want := string(formatBootLog(testNow, actions, nil))
	if !strings.HasSuffix(string(b), want) || len(b) >= bootLogMax+len(want) {
		t.Fatalf("boot log (%d bytes) does not end with %q", len(b), want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
		if f := strings.Fields(line); len(f) != 5 {
			t.Fatalf("malformed line %q", line)
		}
	}
}
