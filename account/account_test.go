package account

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"hinit/internal/testprog"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name, spec string
		uid, gid   int
		user, home string
		groups     []int // nil: not checked (the machine's /etc/group)
	}{
		{"root by name", "root", 0, 0, "root", "/root", nil},
		{"root by uid", "0", 0, 0, "root", "/root", nil},
		// A uid /etc/passwd lacks has its gid as its only group: os/user
		// made up its uid as a group too (a uid that is some group's gid,
		// docker's say, gained that group).
		{"numeric uid without passwd entry", "54321", 54321, 54321, "54321", "/", []int{54321}},
		{"uid and gid", "54321:777", 54321, 777, "54321", "/", []int{777}},
		{"name and group name", "root:root", 0, 0, "root", "/root", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Lookup(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if a.UID != tt.uid || a.GID != tt.gid || a.Name != tt.user || a.Home != tt.home {
				t.Errorf("Lookup(%q) = %+v", tt.spec, a)
			}
			if a.Groups[0] != tt.gid {
				t.Errorf("groups %v do not start with gid %d", a.Groups, tt.gid)
			}
			if tt.groups != nil && !slices.Equal(a.Groups, tt.groups) {
				t.Errorf("Lookup(%q).Groups = %v, want %v", tt.spec, a.Groups, tt.groups)
			}
		})
	}
	if _, err := Lookup("no-such-user-here"); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown name: %v, want ErrUnknown", err)
	}
}

func TestStartedExtra(t *testing.T) {
	got := StartedExtra([]int{0, 1, 4242, 10, 4242, 998}, []int{0, 1, 10})
	if !slices.Equal(got, []int{4242, 998}) {
		t.Errorf("StartedExtra = %v, want [4242 998]", got)
	}
	if got := StartedExtra(nil, []int{0}); len(got) != 0 {
		t.Errorf("StartedExtra(nil) = %v, want none", got)
	}
}

// TestKeptGroupsReachLookup: what KeepStartedGroups recorded is added to
// every account Lookup resolves, once.
func TestKeptGroupsReachLookup(t *testing.T) {
	kept := []int{4242, 0x7ffe}
	extra.Store(&kept)
	t.Cleanup(func() { extra.Store(nil) })
	a, err := Lookup("root")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(a.Groups); n < 3 || a.Groups[0] != 0 || !slices.Equal(a.Groups[n-2:], kept) {
		t.Errorf("groups %v, want root's own then [4242 32766]", a.Groups)
	}
	kept = []int{0}
	if again, _ := Lookup("root"); len(slices.Compact(slices.Sorted(slices.Values(again.Groups)))) != len(again.Groups) {
		t.Errorf("groups %v list a group twice", again.Groups)
	}
}

// TestLookupOutOfDescriptors (issue 14): with no file descriptor left, a
// lookup used to say "unknown user" (main then exited 126 for a user that
// exists). It says EMFILE, and a numeric uid is not made up either. This
// holds for Go's own lookups, which hinit uses (CGO_ENABLED=0); libc's
// (a cgo build: -race) may answer without a descriptor, which is fine.
func TestLookupOutOfDescriptors(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = 64
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	testprog.FillDescriptors(t, os.DevNull)
	for _, spec := range []string{"root", "0", "root:root"} {
		_, err := Lookup(spec)
		if cgoLookups && !errors.Is(err, ErrUnknown) {
			// libc answers without a descriptor once its NSS modules
			// are loaded (by the tests before), else fails with its
			// errno in the text only: never "unknown user" either way.
			continue
		}
		if !errors.Is(err, syscall.EMFILE) || errors.Is(err, ErrUnknown) {
			t.Errorf("Lookup(%q) out of descriptors: %v, want EMFILE", spec, err)
		}
	}
}

// TestDo: with no account fn runs with hinit's own rights on a thread that
// blocks SIGCHLD (asuser.Quiet: a hung volume holds no signal PID 1 waits
// for); with one, as root, with the account's file rights.
func TestDo(t *testing.T) {
	var status string // /proc/thread-self/status while fn runs
	read := func() (err error) {
		b, err := os.ReadFile("/proc/thread-self/status")
		status = string(b)
		return err
	}
	if err := Do(nil, read); err != nil {
		t.Fatal(err)
	}
	if m, ok := testprog.SigMask(status, "SigBlk"); !ok || m&(1<<(syscall.SIGCHLD-1)) == 0 {
		t.Errorf("Do(nil): SigBlk %016x (read: %v) while fn runs: SIGCHLD not blocked", m, ok)
	}
	if os.Geteuid() != 0 {
		t.Skip("switching to an account needs root")
	}
	if err := Do(&Account{UID: 54321, GID: 54321, Groups: []int{54321}}, read); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "\nUid:\t0\t0\t0\t54321\n") {
		t.Errorf("Do(54321): want filesystem uid 54321 while fn runs, status:\n%s", status)
	}
}
