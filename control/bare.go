package control

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// Where hinit's configuration is, and the variables that ask a hinit
// without one for more than the bare mode.
const (
	ConfigEnv      = "HINIT_CONFIG"
	DefaultConfig  = "/etc/hinit/hinit.yaml"
	ScandirEnv     = "HINIT_SCANDIR"
	DefaultScandir = "/run/service"
)

// Bare reports whether a hinit started with this environment runs in its
// bare mode (SPEC §7): no hinit.yaml at the default path, and none of
// HINIT_CONFIG, HINIT_RUNTIME_DIR, HINIT_SCANDIR set. A bare hinit, like
// tini, has no runtime dir and no control socket. hinit decides its mode
// with it, and hsvc, finding no socket, tells a bare hinit from none.
func Bare(getenv func(string) string) bool {
	if getenv(ConfigEnv) != "" || getenv(RuntimeDirEnv) != "" || getenv(ScandirEnv) != "" {
		return false
	}
	_, err := os.Stat(DefaultConfig)
	return errors.Is(err, fs.ErrNotExist)
}

// HinitRunning reports whether a process of this PID namespace runs the
// program hinit (or hinit as tini: /usr/bin/tini links to it), by the
// command names /proc shows anyone.
func HinitRunning() bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if c := strings.TrimSpace(string(b)); err == nil && (c == "hinit" || c == "tini") {
			return true
		}
	}
	return false
}
