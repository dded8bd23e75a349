package control

import (
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMay(t *testing.T) {
	root := Caller{Root: true}
	member := Caller{UID: 10000, Member: true}
	stranger := Caller{UID: 10001}
	tests := []struct {
		name      string
		c         Caller
		verb      string
		protected bool
		want      bool
	}{
		{"root shuts down", root, VerbShutdown, false, true},
		{"root stops protected", root, VerbStop, true, true},
		{"member starts", member, VerbStart, false, true},
		{"member registers", member, VerbRegister, false, true},
		{"member may not shut down", member, VerbShutdown, false, false},
		{"member may not stop protected", member, VerbStop, true, false},
		{"member may not signal protected", member, VerbSignal, true, false},
		{"member reads protected status", member, VerbStatus, true, true},
		{"member waits on protected", member, VerbWait, true, true},
		{"stranger may not read", stranger, VerbStatus, false, false},
		{"stranger may not check", stranger, VerbCheck, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.May(tc.verb, tc.protected); got != tc.want {
				t.Fatalf("May(%s, %v) = %v", tc.verb, tc.protected, got)
			}
		})
	}
}

func TestCallerOf(t *testing.T) {
	gone := func() ([]int, error) { return nil, os.ErrNotExist }
	tests := []struct {
		name       string
		cred       unix.Ucred
		groups     func() ([]int, error)
		controlGID int
		selfUID    int
		wantRoot   bool
		wantMember bool
	}{
		{"root", unix.Ucred{Uid: 0, Gid: 0}, gone, testGID, 0, true, false},
		{"primary gid", unix.Ucred{Uid: 10001, Gid: testGID}, gone, testGID, 0, false, true},
		{"groups unreadable, other gid", unix.Ucred{Uid: 10001, Gid: 10001}, gone, testGID, 0, false, false},
		{"no control group", unix.Ucred{Uid: 10001, Gid: 10001}, func() ([]int, error) { return []int{testGID}, nil }, -1, 0, false, false},
		{"hinit's own uid", unix.Ucred{Uid: 10000, Gid: 0}, gone, -1, 10000, false, true},
		{"supplementary group", unix.Ucred{Uid: 10001, Gid: 10001}, func() ([]int, error) { return []int{100, testGID}, nil }, testGID, 0, false, true},
		{"other supplementary groups", unix.Ucred{Uid: 10001, Gid: 10001}, func() ([]int, error) { return []int{100}, nil }, testGID, 0, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := callerOf(&tc.cred, tc.groups, tc.controlGID, tc.selfUID)
			if c.Root != tc.wantRoot || c.Member != tc.wantMember {
				t.Fatalf("got %+v", c)
			}
		})
	}
}

func TestProcGroups(t *testing.T) {
	want, err := os.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	got, err := procGroups(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("procGroups = %v, os.Getgroups = %v", got, want)
	}
}
