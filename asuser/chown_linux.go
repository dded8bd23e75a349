package asuser

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Tree is what ChownTree changes, and to whom.
type Tree struct {
	UID, GID int // the new owner; GID -1 keeps each entry's group
	// Change reports whether an entry, as its own descriptor shows it,
	// gets the new owner.
	Change func(st *unix.Stat_t) bool
	// SameDev keeps the walk on the filesystem of the tree's top. (A
	// mount inside the tree, a dir's or a file's, is always passed over,
	// and what is under it: the operator's, who mounted it there.)
	SameDev bool
	// TopOnly changes the top dir alone, nothing under it.
	TopOnly bool
	// Enter reports whether the walk goes into a dir, as its own
	// descriptor showed it before any change (the top too); nil: every
	// dir.
	Enter func(st *unix.Stat_t) bool
	// Linked changes an entry Change wanted that is no dir and has other
	// hard links. Without it such an entry is left alone and Refused is
	// told of it: chowning it would change the file of whoever else it is
	// linked from. With it, the caller's Change has judged the owner of
	// every link (they are one inode): -from-uid, where only the old
	// UID's files change.
	Linked  bool
	Refused func(path string)
}

// MaxTreeDepth is how deep ChownTree goes below its top; a dir deeper is
// passed over with an error. The walk holds two descriptors per level, and
// the tree may be its owner's, made as deep as it likes.
const MaxTreeDepth = 1024

// ChownTree gives the tree at path (path included; a file alone when path
// is no dir) to t's owner, entry by entry as t.Change says, never through
// a symlink and whatever is renamed or swapped in the tree meanwhile:
// path is opened a dir at a time without
// following a symlink anywhere on it, each dir below from its parent's descriptor
// (O_NOFOLLOW), and each entry is changed through a descriptor of its own
// once that descriptor has shown its owner and links (a symlink is changed
// itself, never what it points to). A path walk (find -exec chown -h DIR/SUB/FILE)
// follows a dir that the tree's owner swapped for a symlink meanwhile, to
// any file of the system, root's. A mount inside the tree (a dir or a
// file mounted there, told by its mount ID) is never changed nor gone
// into: a dir holding a mount can be renamed, so the tree's owner may move
// a host dir bind-mounted elsewhere in the volume into a tree root
// chowns. An entry that cannot be read or changed
// is passed over; the first such error is returned once the rest is done.
func ChownTree(path string, t Tree) error {
	path = filepath.Clean(path) // "/opt/data/": its last dir is data
	// Every dir of path, not only its last: one on the way swapped for a
	// symlink would lead the walk to another tree of the same name.
	pfd, err := walkDir(filepath.Dir(path), false, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fd, err := openat(pfd, filepath.Base(path), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err == unix.ENOTDIR {
		// A file: judged and changed through a descriptor of its own, as
		// an entry of a tree is (its owner may swap another file in at
		// that name between a stat and a chown of the path); a dir
		// swapped in meanwhile is changed alone, not gone into.
		w := treeWalk{Tree: t}
		w.SameDev = false // one file: no filesystem to stay on
		w.leaf(pfd, path, filepath.Base(path))
		unix.Close(pfd)
		return w.first
	}
	unix.Close(pfd)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	mnt, err := mountID(fd)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	w := treeWalk{Tree: t, dev: st.Dev, mnt: mnt, inMount: true}
	w.dir(fd, path, &st, 0)
	return w.first
}

type treeWalk struct {
	Tree
	dev     uint64 // the top's filesystem
	mnt     uint64 // the top's mount
	inMount bool   // a tree: every entry must be on mnt (a file alone is not)
	first   error
}

// otherMount reports whether fd, an entry of the tree, is on another mount
// than the top (a mount point, or what cannot be told is): passed over.
func (w *treeWalk) otherMount(fd int, path string) bool {
	if !w.inMount {
		return false
	}
	id, err := mountID(fd)
	if err != nil {
		w.note(path, err)
		return true
	}
	return id != w.mnt
}

func (w *treeWalk) note(path string, err error) {
	if w.first == nil {
		w.first = fmt.Errorf("%s: %w", path, err)
	}
}

// dir changes the dir fd (path, st) and what is under it.
func (w *treeWalk) dir(fd int, path string, st *unix.Stat_t, depth int) {
	if w.Change(st) {
		if err := unix.Fchown(fd, w.UID, w.GID); err != nil {
			w.note(path, err)
		}
	}
	if w.TopOnly || w.Enter != nil && !w.Enter(st) {
		return
	}
	if depth >= MaxTreeDepth {
		w.note(path, fmt.Errorf("more than %d dirs deep: not gone into", MaxTreeDepth))
		return
	}
	lfd, err := openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		w.note(path, err)
		return
	}
	list := os.NewFile(uintptr(lfd), path)
	defer list.Close()
	for {
		names, err := list.Readdirnames(removeBatch)
		for _, n := range names {
			w.entry(fd, path+"/"+n, n, depth)
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			w.note(path, err)
			return
		}
	}
}

// entry changes name, in the dir fd: a dir through dir, anything else
// (a symlink itself) through an O_PATH descriptor.
func (w *treeWalk) entry(fd int, path, name string, depth int) {
	var st unix.Stat_t
	dfd, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err == nil {
		defer unix.Close(dfd)
		if err := unix.Fstat(dfd, &st); err != nil {
			w.note(path, err)
			return
		}
		if (!w.SameDev || st.Dev == w.dev) && !w.otherMount(dfd, path) {
			w.dir(dfd, path, &st, depth+1)
		}
		return
	}
	if err != unix.ENOTDIR && !errors.Is(err, ErrSymlink) {
		if err != unix.ENOENT { // gone meanwhile
			w.note(path, err)
		}
		return
	}
	w.leaf(fd, path, name)
}

// leaf changes name, in the dir fd, through an O_PATH descriptor: a file,
// a symlink itself, or a dir swapped in since it was found no dir (that
// dir alone).
func (w *treeWalk) leaf(fd int, path, name string) {
	var st unix.Stat_t
	pfd, err := openat(fd, name, unix.O_PATH, 0)
	if err != nil {
		if err != unix.ENOENT {
			w.note(path, err)
		}
		return
	}
	defer unix.Close(pfd)
	if err := unix.Fstat(pfd, &st); err != nil {
		w.note(path, err)
		return
	}
	switch {
	case !w.Change(&st), w.SameDev && st.Dev != w.dev, w.otherMount(pfd, path):
	case st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Nlink > 1 && !w.Linked:
		if w.Refused != nil {
			w.Refused(path)
		}
	default:
		if err := unix.Fchownat(pfd, "", w.UID, w.GID, unix.AT_EMPTY_PATH); err != nil {
			w.note(path, err)
		}
	}
}

// mountID is the mount fd is on: statx's (Linux 5.8), else the mnt_id of
// /proc/self/fdinfo (Linux 3.15). st_dev cannot tell a bind mount from
// the dir it is mounted in when both are of one filesystem (a host dir
// and a docker volume on the host's disk).
func mountID(fd int) (uint64, error) {
	var stx unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx)
	if err == nil && stx.Mask&unix.STATX_MNT_ID != 0 {
		return stx.Mnt_id, nil
	}
	id, ferr := fdinfoMountID(fd)
	if ferr != nil {
		return 0, fmt.Errorf("cannot tell which mount it is on: %w", errors.Join(err, ferr))
	}
	return id, nil
}

// fdinfoMountID is mountID from /proc/self/fdinfo.
func fdinfoMountID(fd int) (uint64, error) {
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "mnt_id:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("no mnt_id in /proc/self/fdinfo")
}
