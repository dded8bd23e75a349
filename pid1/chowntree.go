package pid1

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"hinit/asuser"
)

const chownTreeUsage = "usage: hinit chown-tree [-xdev] [-top] [-from-uid N | -from-root] UID[:GID] PATH"

// chownTree is `hinit chown-tree`, the image's setup's recursive chown
// (docker/hermes-setup.sh): PATH and everything under it that is not
// UID:GID's (with -from-uid, everything of uid N) becomes UID:GID's, never
// through a symlink, whatever the tree's owner renames meanwhile
// (asuser.ChownTree); with -top, a dir PATH alone. A PATH that is no dir is
// that file alone, judged and changed through its own descriptor. With
// -from-root, what root owns, and what UID owns in another group, becomes
// UID:GID's, and the dirs of other users are not gone into: the tree is
// UID's, who may have moved another user's files there, names and all;
// what of other users was left is said on stdout. A mount inside PATH (a
// dir or a file mounted there) keeps its owners, and what is under it. An
// entry with other hard links is left alone, said on stdout ("refusing to
// change PATH: it has other hard links"), but with -from-uid, where every
// link of it is uid N's; what could not be changed is one line on stderr
// and exit 1. Paths are printed quoted as Go quotes them when they hold
// what is not printable (a newline in a name would forge a line of the
// setup's output).
func chownTree(args []string, stdout, stderr io.Writer) int {
	xdev, top, from, fromRoot := false, false, -1, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-xdev":
			xdev, args = true, args[1:]
		case args[0] == "-top":
			top, args = true, args[1:]
		case args[0] == "-from-root":
			fromRoot, args = true, args[1:]
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
	if !ok || from < 0 && gid < 0 || fromRoot && (from >= 0 || gid < 0) {
		fmt.Fprintln(stderr, "hinit: "+chownTreeUsage+" (UID:GID unless -from-uid)")
		return 2
	}
	change := func(st *unix.Stat_t) bool { return int(st.Uid) != uid || int(st.Gid) != gid }
	var enter func(st *unix.Stat_t) bool
	others, seen := 0, 0
	var other unix.Stat_t // the first entry of another user
	switch {
	case from >= 0:
		change = func(st *unix.Stat_t) bool { return int(st.Uid) == from }
	case fromRoot:
		change = func(st *unix.Stat_t) bool {
			seen++
			switch int(st.Uid) {
			case 0:
				return true
			case uid:
				return int(st.Gid) != gid
			}
			if others == 0 {
				other = *st
			}
			others++
			return false
		}
		enter = func(st *unix.Stat_t) bool { return st.Uid == 0 || int(st.Uid) == uid }
	}
	refused := 0
	err := asuser.ChownTree(args[1], asuser.Tree{UID: uid, GID: gid, Change: change, Enter: enter, SameDev: xdev, TopOnly: top,
		Linked: from >= 0,
		Refused: func(path string) {
			if refused++; refused <= maxRefusedLines {
				fmt.Fprintf(stdout, "refusing to change %s: it has other hard links\n", quotePath(path))
			}
		}})
	if refused > maxRefusedLines {
		fmt.Fprintf(stdout, "refusing to change %d more entries with other hard links in %s\n", refused-maxRefusedLines, quotePath(args[1]))
	}
	switch {
	case seen == 1 && others == 1 && other.Mode&unix.S_IFMT != unix.S_IFDIR: // PATH, a file
		fmt.Fprintf(stdout, "left %s as it is: uid %d's, not root's nor %d's (%d may have moved it there; give it to %d where it comes from)\n", quotePath(args[1]), other.Uid, uid, uid, uid)
	case others > 0:
		fmt.Fprintf(stdout, "left %d entries of other users than root and %d in %s as they are, and did not go into their dirs\n", others, uid, quotePath(args[1]))
	}
	if err != nil {
		fmt.Fprintf(stderr, "hinit: chown-tree: %s\n", quotePath(err.Error()))
		return 1
	}
	return 0
}

// maxRefusedLines is how many entries with other hard links are named, one
// line each; the rest are counted in one line: the tree's owner may link a
// file of its own a million times, and each line went to docker logs at
// every boot.
const maxRefusedLines = 20

// quotePath is s as it is when every rune of it is printable, else quoted
// as Go quotes it.
func quotePath(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
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
