package pid1

import (
	"os"
	"runtime"
	"sync"

	"hinit/cgroup"
)

// threadReserve is how many OS threads a supervising hinit makes at boot
// and keeps (reserveThreads).
const threadReserve = 16

// reserveThreads makes the Go runtime start up to threadReserve OS threads
// now, while the container's pids are plentiful, and keep them idle: the
// runtime never ends an idle thread, and takes one of them whenever it
// needs another (a goroutine blocked in a system call, a log written to a
// slow disk). Once the cgroup's pids.max is reached (a fork bomb, a
// service starting children in a loop), a thread the runtime cannot create
// ends the process at once ("fatal error: newosproc"): hinit as PID 1,
// main's exit status and the logs' last lines with it. An idle thread
// sleeps in the kernel and costs no wake-up.
//
// Under a pids.max, the reserve takes at most half of what is left of
// it, so that it never starves the services at boot, nor crashes hinit
// there itself.
func reserveThreads() {
	want := threadReserve - countThreads()
	if room, ok := cgroup.PidsRoom(); ok {
		want = min(want, room/2)
	}
	if want <= 0 {
		return
	}
	// Each goroutine holds a thread of its own while it is locked; once
	// all are, they let go and end, and their threads wait idle.
	var locked, ended sync.WaitGroup
	release := make(chan struct{})
	for range want {
		locked.Add(1)
		ended.Go(func() {
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread()
		})
	}
	locked.Wait()
	close(release)
	ended.Wait()
}

// countThreads is how many threads this process has now.
func countThreads() int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	return len(ents)
}
