package pid1

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hinit.log stays bounded after main has exited too, when hinit's lines
// go to stderr and on to hinit.log (logToStderrAgain). Before, they went
// to the file itself, past ttyLog: the rest of the session grew it without
// bound.
func TestTTYLogBoundedAfterMain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hinit.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gate := newGate(io.Discard, false, true)
	h := &hinit{ttyLog: f, errGate: gate, logh: newLineHandler(&ttyLog{f: f, path: path}, slog.LevelInfo)}
	h.logToStderrAgain()
	log := slog.New(h.logh)
	line := strings.Repeat("x", 1000)
	for range 2 * ttyLogMax / len(line) {
		log.Info(line)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > ttyLogMax {
		t.Errorf("hinit.log: %d bytes after main, want at most %d", fi.Size(), ttyLogMax)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Errorf("no hinit.log.1: %v", err)
	}
}

// A hinit.log grown past the bound all the same (a descriptor of it
// inherited, a 1 GB ftruncate: a review) is copied at most ttyLogMax bytes
// into hinit.log.1, /run's memory. Before, the whole of it was.
func TestTTYLogRotationCopiesAtMostTheBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hinit.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(8 * ttyLogMax); err != nil {
		t.Fatal(err)
	}
	l := &ttyLog{f: f, path: path}
	if _, err := l.Write([]byte("hinit: a line\n")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{path + ".1": ttyLogMax, path: int64(len("hinit: a line\n"))} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != want {
			t.Errorf("%s: %d bytes, want %d", filepath.Base(name), fi.Size(), want)
		}
	}
}

// A boot keeps the last boot's hinit.log (TTY mode) as hinit.log.prev, the
// last ttyLogMax bytes of hinit.log.1 and hinit.log, when it empties the
// runtime dir; a symlink in their place is not followed. Emptying the dir
// lost what hinit had said while main had the terminal at every docker
// restart (and, after a docker kill, for good).
func TestPreviousTTYLogKept(t *testing.T) {
	for _, linked := range []bool{false, true} {
		base := t.TempDir()
		rt := filepath.Join(base, "rt")
		if err := os.Mkdir(rt, 0o755); err != nil {
			t.Fatal(err)
		}
		secret := filepath.Join(base, "secret")
		files := map[string]string{"hinit.log.1": "hinit: before\n", "hinit.log": "hinit: exited svc=gw code=137\n",
			"control.sock": "", prevLogName: "two boots ago\n"}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(rt, name), []byte(content), 0o640); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(secret, []byte("secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		want := "hinit: before\nhinit: exited svc=gw code=137\n"
		if linked {
			os.Remove(filepath.Join(rt, "hinit.log"))
			if err := os.Symlink(secret, filepath.Join(rt, "hinit.log")); err != nil {
				t.Fatal(err)
			}
			want = "hinit: before\n"
		}
		h := &hinit{set: &settings{runtimeDir: rt, scandir: filepath.Join(base, "service")}, tty: true,
			log: slog.New(slog.DiscardHandler), logh: newLineHandler(io.Discard, slog.LevelInfo)}
		h.prepareRuntime()
		if h.ttyLog != nil {
			h.ttyLog.Close()
		}
		b, err := os.ReadFile(filepath.Join(rt, prevLogName))
		if err != nil || string(b) != want {
			t.Errorf("linked=%v: %s is %q (%v), want %q", linked, prevLogName, b, err, want)
		}
		ents, _ := os.ReadDir(rt)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != "hinit.log "+prevLogName {
			t.Errorf("linked=%v: the runtime dir holds %v, want hinit.log (new, empty) and %s", linked, names, prevLogName)
		}
		if fi, err := os.Stat(filepath.Join(rt, "hinit.log")); err != nil || fi.Size() != 0 {
			t.Errorf("linked=%v: the new hinit.log: %v", linked, err)
		}
	}
}
