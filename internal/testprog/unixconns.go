package testprog

import (
	"os"
	"strings"
	"testing"
)

// Accepted counts the connections accepted on the unix sockets in dir, as
// /proc/net/unix tells (this network namespace's): an accepted connection
// has an inode and the address of the socket it came to; one still in the
// backlog has no inode, and a client's own end no address.
func Accepted(t testing.TB, dir string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line) // Num RefCount Protocol Flags Type St Inode Path
		if len(f) == 8 && f[5] == "03" && f[6] != "0" && strings.HasPrefix(f[7], dir+"/") {
			n++
		}
	}
	return n
}
