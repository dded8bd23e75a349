package pid1

import (
	"fmt"
	"os"
	"path/filepath"

	"hinit/account"
	"hinit/contenvd"
	"hinit/control"
)

// lookupUser resolves hinit.yaml's user at boot: the owner of the scandir,
// the group of the control socket and the environment dir, and the
// identity the reconcile and gateway state writes work under. It stays nil
// when hinit is not root (nothing can be switched) or no user is configured.
// It first records the groups the container gave hinit (--group-add), which
// every account then keeps.
func (h *hinit) lookupUser() {
	if !h.root {
		return
	}
	if kept, err := account.KeepStartedGroups(); err != nil {
		h.log.Warn("supplementary groups of the container not kept", "err", err)
	} else if len(kept) > 0 {
		h.log.Info("supplementary groups kept for main and services", "groups", fmt.Sprint(kept))
	}
	h.user = h.resolveUser()
}

// resolveUser looks hinit.yaml's user up in /etc/passwd as it is now.
func (h *hinit) resolveUser() *account.Account {
	if h.set.cfg.User == "" {
		return nil
	}
	a, err := account.Lookup(h.set.cfg.User)
	if err != nil {
		h.log.Error("user of hinit.yaml cannot be resolved: files are written as root's and the control socket is root-only",
			"user", h.set.cfg.User, "err", err)
		return nil
	}
	return a
}

// reresolveUser looks the user up again after the boot hooks, which may
// have changed its ids (HERMES_UID/PUID remapping) or made it (a derived
// image that creates its account at first boot), and hands the user's
// things over to the new ids.
func (h *hinit) reresolveUser() {
	if !h.root || h.set.cfg.User == "" {
		return
	}
	if h.user == nil {
		a, err := account.Lookup(h.set.cfg.User)
		if err != nil {
			return // said at boot
		}
		h.log.Info("user made by the boot hooks", "user", a.Name, "ids", fmt.Sprintf("%d:%d", a.UID, a.GID))
		h.handOver(a)
		return
	}
	a := h.resolveUser()
	if a == nil || (a.UID == h.user.UID && a.GID == h.user.GID) {
		if a != nil {
			h.user = a // groups may have changed (docker.sock's group)
		}
		return
	}
	h.log.Info("user's ids changed by the boot hooks", "user", a.Name,
		"was", fmt.Sprintf("%d:%d", h.user.UID, h.user.GID), "now", fmt.Sprintf("%d:%d", a.UID, a.GID))
	h.handOver(a)
}

// handOver makes a the user, and gives it what boot made for the user:
// the scandir and the environment dir (still empty of the user's files:
// nothing ran as the user yet), and hinit.log in TTY mode (and the last
// boot's, hinit.log.prev). The control
// socket follows when it is served (regroupSocket).
func (h *hinit) handOver(a *account.Account) {
	h.user = a
	if h.set.scandir != "" {
		if err := os.Lchown(h.set.scandir, a.UID, a.GID); err != nil {
			h.log.Error(fmt.Sprintf("scandir: %v; dynamic services may fail", err))
		}
	}
	if h.envDir != "" {
		if err := contenvd.Regroup(h.envDir, a.GID); err != nil {
			h.log.Error(fmt.Sprintf("environment dir: %v", err))
		}
	}
	if h.ttyLog != nil {
		if err := h.ttyLog.Chown(0, a.GID); err != nil {
			h.log.Warn(fmt.Sprintf("hinit.log: %v; only root may read it", err))
		}
	}
	if h.prevLog != "" { // root's, in root's runtime dir
		if err := os.Lchown(h.prevLog, 0, a.GID); err != nil {
			h.log.Warn(fmt.Sprintf("%s: %v; only root may read it", prevLogName, err))
		}
	}
}

// regroupSocket gives the control socket, created with listenGID, to the
// user's group as the boot hooks left it.
func (h *hinit) regroupSocket(listenGID int) {
	gid := h.userGID()
	if gid != listenGID && gid >= 0 && h.set.runtimeDir != "" {
		if err := os.Lchown(filepath.Join(h.set.runtimeDir, control.SocketName), -1, gid); err != nil {
			h.log.Error(fmt.Sprintf("control socket: %v; the user's hsvc calls may be refused", err))
		}
	}
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

// asUser runs fn with the file rights of the image's user (account.Do).
func (h *hinit) asUser(fn func() error) error { return account.Do(h.user, fn) }
