package pid1

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"hinit/asuser"
)

const chownTreeUsage = "usage: hinit chown-tree [-xdev] [-top] [-from-uid N] UID[:GID] DIR"

// chownTree is `hinit chown-tree`, the image's setup's recursive chown
// (docker/hermes-setup.sh): DIR and everything under it that is not
// UID:GID's (with -from-uid, everything of uid N) becomes UID:GID's, never
// through a symlink, whatever the tree's owner renames meanwhile
// (asuser.ChownTree); with -top, DIR alone. An entry with other hard links is left alone, said
// on stdout ("refusing to change PATH: it has other hard links"); what
// could not be changed is one line on stderr and exit 1.
func chownTree(args []string, stdout, stderr io.Writer) int {
	xdev, top, from := false, false, -1
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-xdev":
			xdev, args = true, args[1:]
		case args[0] == "-top":
			top, args = true, args[1:]
		case args[0] == "-from-uid" && len(args) > 1:
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 0 {
				fmt.Fprintln(stderr, "hinit: "+chownTreeUsage)
				return 2
			}
			from, args = n, args[2:]
		default:
			fmt.Fprintln(stderr, "hinit: "+chownTreeUsage)
			return 2
		}
	}
	if len(args) != 2 {
		fmt.Fprintln(stderr, "hinit: "+chownTreeUsage)
		return 2
	}
	uid, gid, ok := parseOwner(args[0])
	if !ok || from < 0 && gid < 0 {
		fmt.Fprintln(stderr, "hinit: "+chownTreeUsage+" (UID:GID unless -from-uid)")
		return 2
	}
	change := func(st *unix.Stat_t) bool { return int(st.Uid) != uid || int(st.Gid) != gid }
	if from >= 0 {
		change = func(st *unix.Stat_t) bool { return int(st.Uid) == from }
	}
	err := asuser.ChownTree(args[1], asuser.Tree{UID: uid, GID: gid, Change: change, SameDev: xdev, TopOnly: top,
		Refused: func(path string) { fmt.Fprintf(stdout, "refusing to change %s: it has other hard links\n", path) }})
	if err != nil {
		fmt.Fprintf(stderr, "hinit: chown-tree: %v\n", err)
		return 1
	}
	return 0
}

// parseOwner reads UID or UID:GID (gid -1 without one).
func parseOwner(s string) (uid, gid int, ok bool) {
	u, g, hasGID := strings.Cut(s, ":")
	uid, err := strconv.Atoi(u)
	if err != nil || uid < 0 {
		return 0, 0, false
	}
	if !hasGID {
		return uid, -1, true
	}
	gid, err = strconv.Atoi(g)
	if err != nil || gid < 0 {
		return 0, 0, false
	}
	return uid, gid, true
}
