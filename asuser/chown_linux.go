package asuser

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Tree is what ChownTree changes, and to whom.
type Tree struct {
	UID, GID int // the new owner; GID -1 keeps each entry's group
	// Change reports whether an entry, as its own descriptor shows it,
	// gets the new owner.
	Change func(st *unix.Stat_t) bool
	// SameDev keeps the walk on the filesystem of the tree's top (a dir
	// mounted inside it, and what is under it, is passed over).
	SameDev bool
	// TopOnly changes the top dir alone, nothing under it.
	TopOnly bool
	// Enter reports whether the walk goes into a dir, as its own
	// descriptor showed it before any change (the top too); nil: every
	// dir.
	Enter func(st *unix.Stat_t) bool
	// Refused is told of each entry Change wanted but that is no dir and
	// has other hard links: it is left alone (chowning it would change the
	// file of whoever else it is linked from).
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
// any file of the system, root's. An entry that cannot be read or changed
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
	w := treeWalk{Tree: t, dev: st.Dev}
	w.dir(fd, path, &st, 0)
	return w.first
}

type treeWalk struct {
	Tree
	dev   uint64 // the top's filesystem
	first error
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
		if !w.SameDev || st.Dev == w.dev {
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
	case !w.Change(&st), w.SameDev && st.Dev != w.dev:
	case st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Nlink > 1:
		if w.Refused != nil {
			w.Refused(path)
		}
	default:
		if err := unix.Fchownat(pfd, "", w.UID, w.GID, unix.AT_EMPTY_PATH); err != nil {
			w.note(path, err)
		}
	}
}
