// Package account resolves the user a process runs as: a name from
// /etc/passwd, or numeric "uid" / "uid:gid". It gives everything a process
// started under that identity needs: ids, supplementary groups, home and name
// (for HOME, USER and LOGNAME).
//
// Supplementary groups are the account's /etc/group groups plus the groups
// the container gave hinit beyond its own account's (docker run
// --group-add, compose group_add): KeepStartedGroups records those once at
// boot, and every Lookup after it adds them, so main, services and hooks
// keep what the operator granted.
package account

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"hinit/asuser"
)

// Account is a resolved identity.
type Account struct {
	Name   string // login name; the uid in decimal when there is none
	UID    int
	GID    int
	Groups []int  // supplementary groups (from /etc/group), always including GID
	Home   string // "/" when unknown
}

// ID is the identity asuser switches a thread to for a.
func (a *Account) ID() asuser.ID {
	return asuser.ID{UID: a.UID, GID: a.GID, Groups: a.Groups}
}

// Do runs fn with a's file rights (asuser.Do), never root's; with no
// account to switch to (a nil: hinit runs the image's programs as itself)
// it runs fn with hinit's own, quiet (asuser.Quiet). Either way a system
// call on hermes' volume that hangs holds no signal meant for PID 1.
func Do(a *Account, fn func() error) error {
	if a == nil {
		var err error
		asuser.Quiet(func() { err = fn() })
		return err
	}
	return asuser.Do(a.ID(), fn)
}

// DoCtx is Do for a caller that may give up (asuser.DoCtx).
func DoCtx(ctx context.Context, a *Account, fn func() error) error {
	if a == nil {
		var err error
		asuser.Quiet(func() { err = fn() })
		return err
	}
	return asuser.DoCtx(ctx, a.ID(), fn)
}

// ErrUnknown is returned for a user name that /etc/passwd does not know.
var ErrUnknown = errors.New("unknown user")

// Lookup resolves spec: "name", "uid" or "uid:gid". A numeric uid with no
// passwd entry is fine (OpenShift-style random uids): its gid is the uid's
// own primary group when known, else the uid itself.
func Lookup(spec string) (*Account, error) {
	if spec == "" {
		return nil, fmt.Errorf("account: empty user")
	}
	name, group, hasGroup := strings.Cut(spec, ":")
	u, known, err := lookupUser(name)
	if err != nil {
		return nil, err
	}
	a := &Account{Name: u.Username, Home: u.HomeDir}
	a.UID, _ = strconv.Atoi(u.Uid)
	a.GID, _ = strconv.Atoi(u.Gid)
	if hasGroup {
		if a.GID, err = lookupGroup(group); err != nil {
			return nil, err
		}
	}
	a.Groups = []int{a.GID}
	// A uid /etc/passwd lacks has no groups there: asked, os/user would
	// give the uid itself as one (the Gid it was made up with).
	if known {
		if a.Groups, err = groups(u, a.GID); err != nil {
			return nil, err
		}
	}
	if ex := extra.Load(); ex != nil {
		for _, g := range *ex {
			if !slices.Contains(a.Groups, g) {
				a.Groups = append(a.Groups, g)
			}
		}
	}
	if a.Home == "" {
		a.Home = "/"
	}
	return a, nil
}

// lookupUser finds name (or a numeric uid) in /etc/passwd; known is false
// for a numeric uid the file lacks, made up with its uid as gid. Only a
// name or uid the file lacks is unknown: a file that cannot be read (out of
// file descriptors, EMFILE) is that error, never "unknown user".
func lookupUser(name string) (u *user.User, known bool, err error) {
	if uid, nerr := strconv.Atoi(name); nerr == nil {
		u, err := user.LookupId(name)
		var unknown user.UnknownUserIdError
		switch {
		case errors.As(err, &unknown):
			return &user.User{Uid: strconv.Itoa(uid), Gid: strconv.Itoa(uid), Username: name, HomeDir: "/"}, false, nil
		case err != nil:
			return nil, false, fmt.Errorf("account: look up uid %s: %w", name, err)
		}
		return u, true, nil
	}
	u, err = user.Lookup(name)
	var unknown user.UnknownUserError
	switch {
	case errors.As(err, &unknown):
		return nil, false, fmt.Errorf("account: %q: %w", name, ErrUnknown)
	case err != nil:
		return nil, false, fmt.Errorf("account: look up %q: %w", name, err)
	}
	return u, true, nil
}

func lookupGroup(g string) (int, error) {
	if gid, err := strconv.Atoi(g); err == nil {
		return gid, nil
	}
	grp, err := user.LookupGroup(g)
	var unknown user.UnknownGroupError
	switch {
	case errors.As(err, &unknown):
		return 0, fmt.Errorf("account: group %q: %w", g, ErrUnknown)
	case err != nil:
		return 0, fmt.Errorf("account: look up group %q: %w", g, err)
	}
	return strconv.Atoi(grp.Gid)
}

// groups lists u's supplementary groups with gid first. An image without
// /etc/group gives none; a file that cannot be read is an error, not fewer
// groups.
func groups(u *user.User, gid int) ([]int, error) {
	out := []int{gid}
	ids, err := u.GroupIds()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("account: groups of %s: %w", u.Username, err)
	}
	for _, s := range ids {
		if n, err := strconv.Atoi(s); err == nil && n != gid {
			out = append(out, n)
		}
	}
	return out, nil
}

// Env returns HOME, USER and LOGNAME for a.
func (a *Account) Env() map[string]string {
	return map[string]string{"HOME": a.Home, "USER": a.Name, "LOGNAME": a.Name}
}

// extra are the supplementary groups KeepStartedGroups recorded.
var extra atomic.Pointer[[]int]

// KeepStartedGroups records the supplementary groups this process was
// started with that its own account does not give it (/etc/group of the
// image), and returns them: those are what docker run --group-add or
// compose group_add granted. Every later Lookup adds them to the account's
// groups. Group 0 and the process's own groups from /etc/group are never
// kept, so root's groups do not leak to an unprivileged account. Call it
// once, at boot, before any hook can change /etc/group.
func KeepStartedGroups() ([]int, error) {
	have, err := unix.Getgroups()
	if err != nil {
		return nil, fmt.Errorf("account: getgroups: %w", err)
	}
	own, err := Lookup(strconv.Itoa(os.Getuid()))
	if err != nil {
		return nil, err
	}
	kept := StartedExtra(have, append(own.Groups, os.Getgid()))
	extra.Store(&kept)
	return kept, nil
}

// StartedExtra is the part of have that own lacks, without group 0, in
// have's order and without duplicates.
func StartedExtra(have, own []int) []int {
	kept := []int{}
	for _, g := range have {
		if g != 0 && !slices.Contains(own, g) && !slices.Contains(kept, g) {
			kept = append(kept, g)
		}
	}
	return kept
}
