package control

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Where hinit's configuration is, and the variables that ask a hinit
// without one for more than the bare mode.
const (
	ConfigEnv      = "HINIT_CONFIG"
	DefaultConfig  = "/etc/hinit/hinit.yaml"
	ScandirEnv     = "HINIT_SCANDIR"
	DefaultScandir = "/run/service"
)

// RuntimeDir is hinit's runtime dir for an environment lookup
// (os.Getenv): $HINIT_RUNTIME_DIR, /run/hinit by default. hinit, hsvc and
// with-contenv all find it by this one rule.
func RuntimeDir(getenv func(string) string) string {
	if dir := getenv(RuntimeDirEnv); dir != "" {
		return dir
	}
	return DefaultRuntimeDir
}

// Scandir is the scandir for an environment lookup: $HINIT_SCANDIR,
// /run/service by default.
func Scandir(getenv func(string) string) string {
	if dir := getenv(ScandirEnv); dir != "" {
		return dir
	}
	return DefaultScandir
}

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

// Answering reports whether a hinit owns runtimeDir: one answers at its
// control socket, or a socket is there that the caller may not connect
// to, or whose queue stays full for the probe's second (a busy hinit). A
// socket nobody listens on (ECONNREFUSED: left by an earlier boot), none,
// or anything else there does not count.
// A second hinit started inside a container (an old entrypoint's `tini --
// /init ...`, a `docker exec ... hinit`) asks, before it would empty that
// dir and the scandir under the first one's services.
func Answering(runtimeDir string) bool {
	conn, err := dialUnix(filepath.Join(runtimeDir, SocketName), time.Second)
	if err == nil {
		conn.Close()
		return true
	}
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EAGAIN) ||
		errors.Is(err, unix.ETIMEDOUT) || errors.Is(err, unix.EINPROGRESS)
}
