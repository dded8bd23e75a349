package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// acquireLock takes gateway.lock with flock, as hermes'
// acquire_gateway_runtime_lock does, and writes the pid record into it.
// When a live gateway holds it: without replace, an error naming it; with
// replace, a takeover marker naming that gateway, SIGTERM, and up to 10 s
// for it to let go (then SIGKILL).
func acquireLock(dir string, replace bool) (*os.File, error) {
	p := filepath.Join(dir, lockFile)
	deadline := time.Now().Add(10 * time.Second)
	signalled := false
	for {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", p, err)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			rec, _ := json.Marshal(fields{"pid": os.Getpid(), "kind": "hermes-gateway", "argv": os.Args})
			f.Truncate(0)
			f.WriteAt(rec, 0)
			return f, nil
		}
		f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", p, err)
		}
		holder := lockHolder(p)
		switch {
		case !replace:
			return nil, fmt.Errorf("another gateway (pid %d) already runs for %s; use --replace to take over", holder, dir)
		case time.Now().After(deadline):
			syscall.Kill(holder, syscall.SIGKILL)
			deadline = time.Now().Add(5 * time.Second)
		case !signalled && holder > 0:
			takeOver(dir, holder)
			signalled = true
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockHolder is the pid recorded in the lock file.
func lockHolder(p string) int {
	var rec struct{ PID int }
	data, _ := os.ReadFile(p)
	json.Unmarshal(data, &rec)
	return rec.PID
}

// takeOver writes the takeover marker naming pid, then sends it SIGTERM:
// the old gateway exits 0 on a matching marker instead of asking its
// supervisor for a restart.
func takeOver(dir string, pid int) {
	start, _ := startTime(pid)
	m, _ := json.Marshal(fields{"target_pid": pid, "target_start_time": start, "target_hermes_home": dir,
		"replacer_pid": os.Getpid(), "replacer_hermes_home": dir, "written_at": utcNow()})
	writeAtomic(filepath.Join(dir, takeoverFile), m)
	fmt.Printf("gateway: --replace: taking over from pid %d\n", pid)
	syscall.Kill(pid, syscall.SIGTERM)
}
