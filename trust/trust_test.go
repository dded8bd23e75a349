package trust

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

type obj struct {
	uid, gid int
	mode     uint32
}

func (o obj) stat() *unix.Stat_t {
	return &unix.Stat_t{Uid: uint32(o.uid), Gid: uint32(o.gid), Mode: o.mode}
}

// checkVerdict fails unless v is refused saying refused, or, with refused
// empty, root's when root is set, else uid's.
func checkVerdict(t *testing.T, v Verdict, root bool, uid int, refused string) {
	t.Helper()
	switch {
	case refused != "":
		if v.Refused == nil || !strings.Contains(v.Refused.Error(), refused) || v.Root {
			t.Fatalf("verdict %+v, want refused saying %q", v, refused)
		}
	case v.Refused != nil || v.Root != root || (!root && v.UID != uid):
		t.Fatalf("verdict %+v, want root=%v uid=%d", v, root, uid)
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name    string
		objs    []obj
		root    bool
		uid     int
		refused string // substring of the reason; "" = not refused
	}{
		{"nothing read", nil, false, 0, "no file was judged"},
		{"root dir, root file", []obj{{0, 0, 0o755}, {0, 0, 0o644}}, true, 0, ""},
		{"root dir readable only by root", []obj{{0, 0, 0o700}, {0, 0, 0o600}}, true, 0, ""},
		{"hermes dir", []obj{{10000, 10000, 0o755}, {10000, 10000, 0o644}}, false, 10000, ""},
		{"hermes dir, root file", []obj{{10000, 10000, 0o755}, {0, 0, 0o644}}, false, 10000, ""},
		{"root dir, hermes file", []obj{{0, 0, 0o755}, {10000, 10001, 0o644}}, false, 10000, ""},
		{"hermes dir writable by its group", []obj{{10000, 10000, 0o775}, {10000, 10000, 0o664}}, false, 10000, ""},
		{"root dir 0777", []obj{{0, 0, 0o777}, {0, 0, 0o644}}, false, 0, "/o0 is writable by every user (mode 0777)"},
		{"root sticky dir 1777", []obj{{0, 0, 0o1777}, {0, 0, 0o644}}, false, 0, "writable by every user (mode 1777)"},
		{"root dir 0775", []obj{{0, 10000, 0o775}, {0, 0, 0o644}}, false, 0, "/o0 is owned by root but writable by its group (mode 0775)"},
		{"root file 0666", []obj{{0, 0, 0o755}, {0, 0, 0o666}}, false, 0, "/o1 is writable by every user"},
		{"root file 0664", []obj{{0, 0, 0o755}, {0, 10000, 0o664}}, false, 0, "/o1 is owned by root but writable by its group"},
		{"hermes file 0666", []obj{{10000, 10000, 0o755}, {10000, 10000, 0o666}}, false, 0, "writable by every user"},
		{"two owners", []obj{{10000, 10000, 0o755}, {10001, 10001, 0o644}}, false, 0, "/o1 is owned by uid 10001 but the rest by uid 10000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var j Judge
			for i, o := range tc.objs {
				st := unix.Stat_t{Uid: uint32(o.uid), Gid: uint32(o.gid), Mode: o.mode}
				j.Add("/o"+string(rune('0'+i)), &st)
			}
			v := j.Verdict()
			if tc.refused != "" {
				if v.Refused == nil || !strings.Contains(v.Refused.Error(), tc.refused) {
					t.Fatalf("Refused = %v, want it to say %q", v.Refused, tc.refused)
				}
				if v.Root {
					t.Fatalf("a refused verdict is trusted as root")
				}
				return
			}
			if v.Refused != nil || v.Root != tc.root || (!tc.root && v.UID != tc.uid) {
				t.Fatalf("verdict %+v, want root=%v uid=%d", v, tc.root, tc.uid)
			}
		})
	}
}

func TestUser(t *testing.T) {
	if got := (Verdict{Root: true}).User("root"); got != "root" {
		t.Fatalf("root verdict: User(root) = %q, want root", got)
	}
	if got := (Verdict{UID: 10000, GID: 10001}).User("root"); got != "10000:10001" {
		t.Fatalf("owner verdict: User(root) = %q, want 10000:10001", got)
	}
}

// TestExecParent: a root-owned s6 dir executed through a scandir that a
// non-root user owns runs as that user, who could swap the dir for its own
// between the read and the start; through a root-owned 0755 scandir it
// keeps root's verdict.
func TestExecParent(t *testing.T) {
	rootDir := []obj{{0, 0, 0o755}, {0, 0, 0o755}}
	tests := []struct {
		name    string
		parent  obj
		root    bool
		uid     int
		refused string
	}{
		{"root scandir 0755", obj{0, 0, 0o755}, true, 0, ""},
		{"hermes scandir 0755", obj{10000, 10000, 0o755}, false, 10000, ""},
		{"hermes scandir 0775", obj{10000, 10000, 0o775}, false, 10000, ""},
		{"root scandir 0775", obj{0, 10000, 0o775}, false, 0, "/scandir is owned by root but writable by its group"},
		{"root scandir 1777", obj{0, 0, 0o1777}, false, 0, "/scandir is writable by every user"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var j Judge
			for i, o := range rootDir {
				st := unix.Stat_t{Uid: uint32(o.uid), Gid: uint32(o.gid), Mode: o.mode}
				j.Add("/o"+string(rune('0'+i)), &st)
			}
			j.AddExecParent("/scandir", tc.parent.stat())
			checkVerdict(t, j.Verdict(), tc.root, tc.uid, tc.refused)
		})
	}
}

// TestReplacers: who may put something else at a path of an s6 dir. In a
// sticky dir only the entry's owner and the dir's count (a user renaming
// its own /run/service, /run being 1777, chose what the path holds);
// otherwise the dir's owner, and a group or every user who may write it,
// which withdraws root's authority only: a user's dir under a 0777 /run (a
// Kubernetes emptyDir) or a 0775 one (OpenShift) still runs as that user.
func TestReplacers(t *testing.T) {
	root, hermes := obj{0, 0, 0o755}, obj{10000, 10000, 0o755}
	tests := []struct {
		name               string
		dir, entry, parent obj
		root               bool
		uid                int
		refused            string
	}{
		{"root entry in root 0755", root, root, obj{0, 0, 0o755}, true, 0, ""},
		{"root entry in root sticky 1777", root, root, obj{0, 0, 0o1777}, true, 0, ""},
		{"hermes entry in root sticky 1777", root, hermes, obj{0, 0, 0o1777}, false, 10000, ""},
		{"hermes symlink in root sticky 1777", root, obj{10000, 10000, 0o777}, obj{0, 0, 0o1777}, false, 10000, ""},
		{"root entry in hermes dir", root, root, obj{10000, 10000, 0o755}, false, 10000, ""},
		{"root entry in root 0777", root, root, obj{0, 0, 0o777}, false, 0, "/p/e can be replaced by every user (/p is mode 0777)"},
		{"root entry in root 0775", root, root, obj{0, 0, 0o775}, false, 0, "/p/e can be replaced by group 0 (/p is mode 0775)"},
		{"hermes dir, hermes entry in root 0777", hermes, hermes, obj{0, 0, 0o777}, false, 10000, ""},
		{"hermes dir, hermes entry in root 0775", hermes, hermes, obj{0, 0, 0o775}, false, 10000, ""},
		{"hermes dir, entry in another user's dir", hermes, hermes, obj{10001, 10001, 0o755}, false, 0, "owned by uid 10001 but the rest by uid 10000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var j Judge
			j.Add("/p/e/svc", tc.dir.stat())
			j.AddReplacers("/p/e", "/p", tc.entry.stat(), tc.parent.stat())
			checkVerdict(t, j.Verdict(), tc.root, tc.uid, tc.refused)
		})
	}
}
