package pid1

import (
	"hinit/account"
	"hinit/asuser"
)

// lookupUser resolves hinit.yaml's user once at boot: the owner of the
// scandir, the group of the control socket and the environment dir, and the
// identity the reconcile and gateway state writes work under. It stays nil
// when hinit is not root (nothing can be switched) or no user is configured.
func (h *hinit) lookupUser() {
	if !h.root || h.set.cfg.User == "" {
		return
	}
	a, err := account.Lookup(h.set.cfg.User)
	if err != nil {
		h.log.Error("user of hinit.yaml not found: files are written as root's and the control socket is root-only",
			"user", h.set.cfg.User, "err", err)
		return
	}
	h.user = a
}

func (h *hinit) userUID() int {
	if h.user == nil {
		return -1
	}
	return h.user.UID
}

func (h *hinit) userGID() int {
	if h.user == nil {
		return -1
	}
	return h.user.GID
}

// asUser runs fn with the file rights of the image's user (never root's),
// or with hinit's own when there is no such user to switch to.
func (h *hinit) asUser(fn func() error) error {
	if h.user == nil {
		return fn()
	}
	return asuser.Do(asuser.ID{UID: h.user.UID, GID: h.user.GID, Groups: h.user.Groups}, fn)
}
