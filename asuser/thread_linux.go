package asuser

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"hinit/capset"
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
	if now, err := getgroups(); err != nil || !sameSet(now, id.Groups) {
		return fmt.Errorf("setgroups: %w: want %v, have %v (%v)", errNotSwitched, id.Groups, now, err)
	}
	if err := setfs(unix.SYS_SETFSGID, id.GID); err != nil {
		return fmt.Errorf("setfsgid: %w", err)
	}
	if err := setfs(unix.SYS_SETFSUID, id.UID); err != nil {
		return fmt.Errorf("setfsuid: %w", err)
	}
	if id.UID != 0 {
		// The kernel drops these from the effective set when fsuid leaves
		// 0, unless SECBIT_NO_SETUID_FIXUP says otherwise: fn would then
		// run with root's rights on the user's files.
		if kept, err := fsCapsKept(); err != nil || kept {
			return fmt.Errorf("filesystem capabilities kept after setfsuid (SECBIT_NO_SETUID_FIXUP?): %w (%v)", errNotSwitched, err)
		}
	}
	return nil
}

// fsCaps are the capabilities the kernel drops from a thread's effective
// set when its fsuid leaves 0 (capabilities(7)).
const fsCaps = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH | 1<<unix.CAP_FOWNER |
	1<<unix.CAP_FSETID | 1<<unix.CAP_LINUX_IMMUTABLE | 1<<unix.CAP_MKNOD | 1<<unix.CAP_MAC_OVERRIDE

// fsCapsKept reports whether the calling thread still has any of fsCaps
// in its effective set.
func fsCapsKept() (bool, error) {
	eff, err := capset.Effective()
	return eff&fsCaps != 0, err
}

// threadIdentity is the calling thread's supplementary groups, fsgid and
// fsuid, for switchThread to put back.
func threadIdentity() (ID, error) {
	groups, err := getgroups()
	if err != nil {
		return ID{}, err
	}
	// setfsuid and setfsgid return the value they replace; -1 changes
	// nothing.
	uid, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, ^uintptr(0), 0, 0)
	gid, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, ^uintptr(0), 0, 0)
	return ID{UID: int(uint32(uid)), GID: int(uint32(gid)), Groups: groups}, nil
}

// sameSet reports whether a and b hold the same ids (the kernel keeps
// groups sorted, and drops none).
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// getgroups is the calling thread's supplementary groups.
func getgroups() ([]int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_GETGROUPS, 0, 0, 0) // how many
	if errno != 0 {
		return nil, errno
	}
	if n == 0 {
		return nil, nil
	}
	gids := make([]uint32, n)
	n, _, errno = unix.RawSyscall(unix.SYS_GETGROUPS, n, uintptr(unsafe.Pointer(&gids[0])), 0)
	if errno != 0 {
		return nil, errno
	}
	groups := make([]int, n)
	for i := range groups {
		groups[i] = int(gids[i])
	}
	return groups, nil
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

// blockSignals blocks every signal on the calling thread but the faults
// (the kernel keeps SIGKILL and SIGSTOP deliverable anyway) and returns the
// mask it had. A fault is the faulting thread's own: blocked, the kernel
// would reset its handler and end hinit without the Go runtime's panic, and
// left open it cannot hold a signal meant for the process.
func blockSignals() (old uint64, err error) {
	all := ^uint64(0) &^ faults
	if _, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK,
		uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); errno != 0 {
		return 0, errno
	}
	return old, nil
}

// faults are the synchronous signals a thread's own fault raises.
const faults = 1<<(unix.SIGSEGV-1) | 1<<(unix.SIGBUS-1) | 1<<(unix.SIGFPE-1) | 1<<(unix.SIGILL-1) |
	1<<(unix.SIGTRAP-1) | 1<<(unix.SIGSYS-1)

// setSignalMask sets the calling thread's signal mask.
func setSignalMask(m uint64) error {
	if _, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK,
		uintptr(unsafe.Pointer(&m)), 0, 8, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
