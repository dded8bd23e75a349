// Package hangfs mounts, for tests, a FUSE file system that passes through
// to a directory until told to hang: from then on every write(2) on it (with
// HangAll, every lookup and stat too) sleeps in the kernel, as one on an NFS
// or FUSE volume whose server no longer answers, until Release. It needs
// root and /dev/fuse; the test is skipped, with the reason, without them.
package hangfs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"hinit/internal/testprog"
)

// FS is one mounted hangfs.
type FS struct {
	Dir     string // the mount point
	Backing string // the directory it passes through to

	mu      sync.Mutex
	hung    bool
	all     bool          // lookups and getattr hang too
	release chan struct{} // closed by Release: hung writes go on
	once    sync.Once
	stuck   chan int // the thread of each request that hangs
}

// Mount mounts a hangfs over a fresh directory for the test's duration.
func Mount(t testing.TB) *FS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("hangfs needs root to mount FUSE")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("hangfs needs /dev/fuse: %v", err)
	}
	top := t.TempDir()
	h := &FS{Dir: filepath.Join(top, "mnt"), Backing: filepath.Join(top, "backing"),
		release: make(chan struct{}), stuck: make(chan int, 64)}
	for _, d := range []string{h.Dir, h.Backing} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inner, err := fs.NewLoopbackRoot(h.Backing)
	if err != nil {
		t.Fatal(err)
	}
	root := &node{LoopbackNode: inner.(*fs.LoopbackNode), h: h}
	server, err := fs.Mount(h.Dir, root, &fs.Options{MountOptions: fuse.MountOptions{
		DirectMountStrict: true, AllowOther: true, FsName: "hangfs", Name: "hangfs"}})
	if err != nil {
		t.Skipf("hangfs: cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		h.Release()
		if err := server.Unmount(); err != nil {
			t.Errorf("hangfs: unmount %s: %v", h.Dir, err)
		}
	})
	return h
}

// Hang makes every write from now on sleep in the kernel until Release,
// the test's end, or releaseAfter, whichever comes first: a process whose
// own write waits on its own FUSE server cannot exit (not even by SIGKILL,
// go test's timeout) until the server answers, and a test stuck past that
// would hold CI until someone aborts the connection by hand.
func (h *FS) Hang() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hung = true
	time.AfterFunc(releaseAfter, h.Release)
}

// HangAll is Hang for lookups and getattr too: a stat sleeps as well.
func (h *FS) HangAll() {
	h.mu.Lock()
	h.all = true
	h.mu.Unlock()
	h.Hang()
}

// releaseAfter bounds a hang.
const releaseAfter = 30 * time.Second

// Release lets the writes that hang go on, and every write after them.
func (h *FS) Release() {
	h.once.Do(func() { close(h.release) })
}

// Stuck delivers the thread id of each request that hangs (the FUSE
// request names the thread that made it), once that thread is asleep in
// the kernel waiting for the answer; at most 64 are kept.
func (h *FS) Stuck() <-chan int { return h.stuck }

// CheckQuiet fails the test unless thread tid of this process (one Stuck
// named) blocks SIGCHLD, SIGTERM and SIGINT: asleep on the hung volume, it
// must hold no signal meant for hinit. what names the sleeper in the
// message.
func CheckQuiet(t testing.TB, tid int, what string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		t.Fatalf("%s's thread %d: %v", what, tid, err)
	}
	m, ok := testprog.SigMask(string(b), "SigBlk")
	for _, sig := range []syscall.Signal{syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT} {
		if !ok || m&(1<<(sig-1)) == 0 {
			t.Errorf("thread %d, asleep in %s on the hung volume, blocks %016x (read: %v): %v not blocked", tid, what, m, ok, sig)
		}
	}
}

// node is a loopback node whose writes hang once the FS is hung.
type node struct {
	*fs.LoopbackNode
	h *FS
}

// WrapChild makes every node the loopback creates one of these.
func (n *node) WrapChild(_ context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), h: n.h}
}

var (
	_ fs.NodeWrapChilder = (*node)(nil)
	_ fs.NodeWriter      = (*node)(nil)
	_ fs.NodeCreater     = (*node)(nil)
	_ fs.NodeOpener      = (*node)(nil)
	_ fs.NodeLookuper    = (*node)(nil)
	_ fs.NodeGetattrer   = (*node)(nil)
)

// Create and Open hand out the loopback's file through file, which the
// kernel cannot pass through to the backing file (FUSE passthrough, Linux
// 6.9): every write must reach Write.
func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if fh != nil {
		fh = file{fh}
	}
	return in, fh, fl, errno
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if fh != nil {
		fh = file{fh}
	}
	return fh, fl, errno
}

// file is a loopback file without its passthrough descriptor.
type file struct{ fh fs.FileHandle }

func (f file) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return f.fh.(fs.FileReader).Read(ctx, dest, off)
}

func (f file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	return f.fh.(fs.FileWriter).Write(ctx, data, off)
}

func (f file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.fh.(fs.FileGetattrer).Getattr(ctx, out)
}

func (f file) Flush(ctx context.Context) syscall.Errno { return f.fh.(fs.FileFlusher).Flush(ctx) }

func (f file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return f.fh.(fs.FileFsyncer).Fsync(ctx, flags)
}

func (f file) Release(ctx context.Context) syscall.Errno { return f.fh.(fs.FileReleaser).Release(ctx) }

// wait holds a request while the FS is hung (for every operation, or for
// writes only), after telling Stuck which thread asked.
func (h *FS) wait(ctx context.Context, write bool) {
	h.mu.Lock()
	hung := h.hung && (write || h.all)
	h.mu.Unlock()
	if !hung {
		return
	}
	if c, ok := ctx.(*fuse.Context); ok {
		select {
		case h.stuck <- int(c.Caller.Pid):
		default:
		}
	}
	<-h.release
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.h.wait(ctx, false)
	return n.LoopbackNode.Lookup(ctx, name, out)
}

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.h.wait(ctx, false)
	return n.LoopbackNode.Getattr(ctx, fh, out)
}

func (n *node) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	n.h.wait(ctx, true)
	if w, ok := fh.(fs.FileWriter); ok {
		return w.Write(ctx, data, off)
	}
	return 0, syscall.EBADF
}
