package control

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// callerOf turns peer credentials into a Caller. Supplementary groups are
// not part of SO_PEERCRED: groups gives them (Conn.peerGroups: as they were
// at connect), asked only when the uid and primary gid do not decide. A
// peer whose groups cannot be read counts only by its uid and primary gid.
func callerOf(cred *unix.Ucred, groups func() ([]int, error), controlGID, selfUID int) Caller {
	c := Caller{UID: int(cred.Uid), GID: int(cred.Gid), PID: int(cred.Pid)}
	c.Root = c.UID == 0
	switch {
	case c.UID == selfUID && !c.Root:
		c.Member = true // a non-root hinit: its own uid could signal it anyway
	case controlGID >= 0 && c.GID == controlGID:
		c.Member = true
	case controlGID >= 0:
		g, _ := groups()
		c.Member = slices.Contains(g, controlGID)
	}
	return c
}

// procGroups reads the supplementary groups of pid from the "Groups:" line
// of /proc/<pid>/status: Conn.peerGroups' way on a kernel without
// SO_PEERGROUPS.
func procGroups(pid int) ([]int, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, fmt.Errorf("read groups of pid %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Groups:")
		if !ok {
			continue
		}
		var groups []int
		for _, field := range strings.Fields(rest) {
			if g, err := strconv.Atoi(field); err == nil {
				groups = append(groups, g)
			}
		}
		return groups, nil
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read groups of pid %d: %w", pid, err)
	}
	return nil, fmt.Errorf("read groups of pid %d: no Groups line", pid)
}
