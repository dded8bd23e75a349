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
