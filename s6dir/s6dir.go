// Package s6dir reads an s6 servicedir (s6's servicedir(7)): the scandir
// calls Read while it holds the dir open (SPEC §8), as do hsvc's s6
// commands; the manager translates what it read into the definition
// hinit's supervisor runs (manager/s6service.go). It only reads, and
// imports nothing of hinit.yaml's, so hsvc stays without a YAML parser.
//
// What is read: an executable regular file run (what makes a dir an s6
// longrun); finish; notification-fd, timeout-kill, timeout-finish,
// down-signal and max-death-tally (small regular files); log/run. type,
// dependencies.d, a supervise/ skeleton (dirs, FIFOs) and event/ are never
// opened, so nothing planted there can block hinit, and hinit never
// creates anything in the dir, so that removing it is the writer's own
// business.
package s6dir

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"hinit/launch"
	"hinit/signame"
	"hinit/trust"
)

// The names in a service dir that more packages than this one read: s6's
// run, down and notification-fd, and hinit's own definition, which makes a
// dir hinit's whatever else it holds.
const (
	RunFile          = "run"
	DownFile         = "down"
	NotificationFile = "notification-fd"
	DefinitionFile   = "service.yaml"
)

// Dir is what an s6 servicedir asks for. It is comparable, so the scandir
// notices any change.
type Dir struct {
	Finish         bool          // finish is an executable file
	NotificationFD int           // 0: none
	TimeoutKill    time.Duration // 0: none (s6 never sends SIGKILL by itself)
	TimeoutFinish  time.Duration // 0: s6's default, 5 s
	DownSignal     string        // "" = TERM
	MaxDeathTally  int           // read and checked; hinit keeps no death tally
	Log            bool          // log/run is an executable file
}

// maxSmall is the largest control file read (a number or a signal name).
const maxSmall = 64

// ErrNotS6 is returned by Read for a dir that is no s6 servicedir: it has
// no executable regular file named run.
var ErrNotS6 = errors.New("no executable run file")

// Read reads the servicedir held open as dfd (path names it in messages)
// and shows every file it opened to judge, the trust rule's (package
// trust). Symlinks are refused, FIFOs never opened.
func Read(dfd int, path string, judge *trust.Judge) (*Dir, error) {
	if ok, err := executable(dfd, RunFile, path, judge); err != nil || !ok {
		if err == nil {
			err = ErrNotS6
		}
		return nil, err
	}
	d := &Dir{}
	var err error
	if d.Finish, err = executable(dfd, "finish", path, judge); err != nil {
		return nil, err
	}
	if d.NotificationFD, err = number(dfd, NotificationFile, path, judge, 3, launch.MaxFD); err != nil {
		return nil, err
	}
	ms, err := number(dfd, "timeout-kill", path, judge, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	d.TimeoutKill = time.Duration(ms) * time.Millisecond
	if ms, err = number(dfd, "timeout-finish", path, judge, 0, 1<<31-1); err != nil {
		return nil, err
	}
	d.TimeoutFinish = time.Duration(ms) * time.Millisecond
	if d.MaxDeathTally, err = number(dfd, "max-death-tally", path, judge, 0, 4096); err != nil {
		return nil, err
	}
	if d.DownSignal, err = signal(dfd, path, judge); err != nil {
		return nil, err
	}
	d.Log, err = logRun(dfd, path, judge)
	return d, err
}

// executable reports whether name in dfd is a regular file with an execute
// bit; a symlink is refused.
func executable(dfd int, name, path string, judge *trust.Judge) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("stat %s/%s: %w", path, name, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return false, fmt.Errorf("%s/%s is a symlink; s6 dirs in the scandir hold the file itself", path, name)
	case st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0:
		return false, nil
	}
	judge.Add(path+"/"+name, &st)
	return true, nil
}

// readSmall reads the small control file name, "" when absent.
func readSmall(dfd int, name, path string, judge *trust.Judge) (string, error) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("open %s/%s: %w", path, name, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", fmt.Errorf("stat %s/%s: %w", path, name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > maxSmall {
		return "", fmt.Errorf("%s/%s: not a regular file of at most %d bytes", path, name, maxSmall)
	}
	if trust.ForeignLink(dfd, &st) { // what a bad value says would quote it
		return "", fmt.Errorf("%s/%s: it has other hard links and another owner than its dir", path, name)
	}
	judge.Add(path+"/"+name, &st)
	buf := make([]byte, maxSmall+1)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return "", fmt.Errorf("read %s/%s: %w", path, name, err)
	}
	return strings.TrimSpace(string(buf[:n])), nil
}

// number reads name as an unsigned number in lo..hi; 0 when absent.
func number(dfd int, name, path string, judge *trust.Judge, lo, hi int) (int, error) {
	s, err := readSmall(dfd, name, path, judge)
	if err != nil || s == "" {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s/%s: %q is not a number in %d..%d", path, name, s, lo, hi)
	}
	return n, nil
}

// signal reads down-signal: a name (SIGTERM, TERM) or a number.
func signal(dfd int, path string, judge *trust.Judge) (string, error) {
	s, err := readSmall(dfd, "down-signal", path, judge)
	if err != nil || s == "" {
		return "", err
	}
	sig, err := signame.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%s/down-signal: unknown signal %q", path, s)
	}
	return signame.Name(sig), nil
}

// logRun reports whether log/run exists and is executable; the log dir is
// opened without following a symlink and judged like the service's own.
func logRun(dfd int, path string, judge *trust.Judge) (bool, error) {
	lfd, err := unix.Openat(dfd, "log", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open %s/log: %w", path, err)
	}
	defer unix.Close(lfd)
	var st unix.Stat_t
	if err := unix.Fstat(lfd, &st); err != nil {
		return false, fmt.Errorf("stat %s/log: %w", path, err)
	}
	judge.Add(path+"/log", &st)
	return executable(lfd, RunFile, path+"/log", judge)
}

// DefaultKillTimeout is the SIGKILL deadline of a dir without
// timeout-kill. s6 would wait for ever; hinit does not let a stop hang, and
// waits as long as hermes' own supervisors do for the gateways it writes
// these dirs for: its default stop budget (reconcile.StopTimeout with
// hermes' default drains; a shorter one SIGKILLed a gateway waiting for
// its cron work).
const DefaultKillTimeout = 70 * time.Second
