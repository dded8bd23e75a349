package testprog

import (
	"os/user"
	"strconv"
	"testing"
)

// UnusedUID returns a uid that neither /etc/passwd nor /etc/group knows
// (as a uid and as a gid), from 10000 up, so a test that runs a process as
// "N:N" and expects HOME=/ and USER=N holds on a machine that has, say, a
// hermes:x:10000 account.
func UnusedUID(t testing.TB) int {
	t.Helper()
	for id := 10000; id < 60000; id++ {
		s := strconv.Itoa(id)
		if _, err := user.LookupId(s); err == nil {
			continue
		}
		if _, err := user.LookupGroupId(s); err == nil {
			continue
		}
		return id
	}
	t.Fatal("no unused uid between 10000 and 60000")
	return 0
}
