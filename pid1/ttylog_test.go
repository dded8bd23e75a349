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
