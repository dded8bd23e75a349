package asuser

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errNotSwitched reports a credential change the kernel did not apply.
var errNotSwitched = errors.New("credentials did not change")

// switchThread sets the calling thread's supplementary groups, fsgid and
// fsuid, in that order (fsuid last: its change drops the thread's filesystem
// capabilities). Raw syscalls, on purpose: syscall.Setgroups and friends
// apply to every thread of the process.
func switchThread(id ID) error {
	if err := setgroups(id.Groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := setfs(unix.SYS_SETFSGID, id.GID); err != nil {
		return fmt.Errorf("setfsgid: %w", err)
	}
	if err := setfs(unix.SYS_SETFSUID, id.UID); err != nil {
		return fmt.Errorf("setfsuid: %w", err)
	}
	return nil
}

// setgroups replaces the calling thread's supplementary groups.
func setgroups(groups []int) error {
	gids := make([]uint32, len(groups))
	for i, g := range groups {
		gids[i] = uint32(g)
	}
	var p unsafe.Pointer
	if len(gids) > 0 {
		p = unsafe.Pointer(&gids[0])
	}
	_, _, errno := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(gids)), uintptr(p), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// setfs calls setfsuid or setfsgid. Neither reports failure: both return
// the previous value, so a second call with the same id reads the value
// back and tells whether the first one took.
func setfs(trap uintptr, id int) error {
	unix.RawSyscall(trap, uintptr(id), 0, 0)
	now, _, _ := unix.RawSyscall(trap, uintptr(id), 0, 0)
	if int(now) != id {
		return fmt.Errorf("%w: want %d, have %d", errNotSwitched, id, int(now))
	}
	return nil
}
