package gwstate

import (
	"encoding/json"
	"path/filepath"
)

// LifecycleFile is hermes' lifecycle sentinel in a profile dir
// (gateway/lifecycle_ledger.py): the gateway writes phase "running" when it
// starts and "exited" on every clean exit path, so a "running" found at
// boot is a life that ended without one (SIGKILL, the OOM killer, the
// container killed).
const LifecycleFile = "state/gateway.lifecycle.json"

// maxLifecycle bounds the sentinel read: hermes writes a few fields, under
// 300 bytes.
const maxLifecycle = 64 << 10

// PriorExit is how the profile's last gateway life ended, for the boot log's
// prior_exit: clean (the sentinel's phase is "exited"), unclean ("running":
// the old container's processes are gone at boot) or unknown (no sentinel,
// or one that cannot be read: symlinked, not a regular file, corrupt), as
// hermes' own container_boot labels it. Read as the image's user, never
// through a symlink, like every state file, out of budget (nil: none).
func PriorExit(profileDir string, budget *Budget) string {
	data, _, err := readFile(filepath.Join(profileDir, LifecycleFile), maxLifecycle, budget)
	if err != nil {
		return "unknown"
	}
	var doc struct {
		Phase any `json:"phase"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return "unknown"
	}
	switch doc.Phase {
	case "exited":
		return "clean"
	case "running":
		return "unclean"
	}
	return "unknown"
}
