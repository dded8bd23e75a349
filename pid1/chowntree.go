package pid1

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"hinit/asuser"
)

const chownTreeUsage = "usage: hinit chown-tree [-xdev] [-from-uid N] UID[:GID] DIR"

// chownTree is `hinit chown-tree`, the image's setup's recursive chown
// (docker/hermes-setup.sh): DIR and everything under it that is not
// UID:GID's (with -from-uid, everything of uid N) becomes UID:GID's, never
// through a symlink, whatever the tree's owner renames meanwhile
// (asuser.ChownTree). An entry with other hard links is left alone, said
// on stdout ("refusing to change PATH: it has other hard links"); what
// could not be changed is one line on stderr and exit 1.
func chownTree(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chown-tree", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	xdev := fs.Bool("xdev", false, "stay on DIR's filesystem")
	from := fs.Int("from-uid", -1, "change what uid N owns (the owner only, unless :GID is given)")
	if err := fs.Parse(args); err != nil || fs.NArg() != 2 {
		fmt.Fprintln(stderr, "hinit: "+chownTreeUsage)
		return 2
	}
	uid, gid, ok := parseOwner(fs.Arg(0))
	if !ok || *from < -1 || *from == -1 && gid < 0 {
		fmt.Fprintln(stderr, "hinit: "+chownTreeUsage+" (UID:GID unless -from-uid)")
		return 2
	}
	change := func(st *unix.Stat_t) bool { return int(st.Uid) != uid || int(st.Gid) != gid }
	if *from >= 0 {
		change = func(st *unix.Stat_t) bool { return int(st.Uid) == *from }
	}
	err := asuser.ChownTree(fs.Arg(1), asuser.Tree{UID: uid, GID: gid, Change: change, SameDev: *xdev,
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
