package control

import (
	"errors"
	"testing"
)

// TestAdmission walks the shares of issue 14: root's own, one uid's, all
// other uids', and waits that do not hold request slots.
func TestAdmission(t *testing.T) {
	a := newAdmission(limits{root: 2, conns: 3, connsPerUser: 2, waits: 3, waitsPerUser: 2})
	take := func(uid int) *slot {
		t.Helper()
		sl, err := a.admit(uid)
		if err != nil {
			t.Fatalf("admit uid %d: %v", uid, err)
		}
		return sl
	}
	busy := func(uid int, want string) {
		t.Helper()
		if _, err := a.admit(uid); !errors.Is(err, errBusy) || err.Error() != want {
			t.Fatalf("admit uid %d: %v, want %q", uid, err, want)
		}
	}
	h1, h2 := take(10000), take(10000)
	busy(10000, "hinit is busy: uid 10000 has 2 requests open (at most 2 per user)")
	r1, r2 := take(0), take(0) // root is not in the others' share
	busy(0, "hinit is busy: root has 2 requests open")
	r1.release()
	take(0)
	o1 := take(10001)
	busy(10002, "hinit is busy: 3 requests of users other than root open")

	// A wait frees its request slot, within the uid's share of waits.
	for _, sl := range []*slot{h1, h2} {
		if err := sl.toWait(); err != nil {
			t.Fatal(err)
		}
	}
	h3 := take(10000)
	h4 := take(10000)
	if err := h3.toWait(); err == nil || err.Error() != "hinit is busy: uid 10000 has 2 waits open (at most 2 per user)" {
		t.Fatalf("third wait of uid 10000: %v", err)
	}
	if err := o1.toWait(); err != nil {
		t.Fatal(err)
	}
	o2 := take(10001)
	if err := o2.toWait(); err == nil || err.Error() != "hinit is busy: 3 waits of users other than root open" {
		t.Fatalf("fourth wait: %v", err)
	}
	if err := r2.toWait(); err != nil {
		t.Fatalf("root's wait: %v", err)
	}

	// Everything given back, twice: the counts return to zero.
	for _, sl := range []*slot{h1, h2, h3, h4, o1, o2, r2, h1} {
		sl.release()
	}
	if len(a.byUID) != 0 || a.others != (count{}) || a.root.conns != 1 {
		t.Fatalf("after release: by uid %v, others %+v, root %+v", a.byUID, a.others, a.root)
	}
}
