package asuser

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNoFollow plants symlinks in a user's dir pointing at root-owned
// places and checks that no helper goes through them, as root and as the
// user.
func TestNoFollow(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name string
		op   func(home string) error
	}{
		{"OpenFile on a symlink", func(home string) error {
			f, err := OpenFile(filepath.Join(home, "link"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err == nil {
				f.WriteString("pwned\n")
				f.Close()
			}
			return err
		}},
		{"OpenFile through a symlinked dir", func(home string) error {
			f, err := OpenFile(filepath.Join(home, "dirlink", "root-only"), os.O_WRONLY|os.O_TRUNC, 0)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"MkdirAll through a symlinked dir", func(home string) error {
			return MkdirAll(filepath.Join(home, "dirlink", "new", "deeper"), 0o755)
		}},
		{"MkdirAll on a symlink", func(home string) error {
			return MkdirAll(filepath.Join(home, "dirlink"), 0o755)
		}},
		{"WriteFileAtomic through a symlinked dir", func(home string) error {
			return WriteFileAtomic(filepath.Join(home, "dirlink", "root-only"), []byte("pwned\n"), 0o644)
		}},
	}
	for _, tc := range tests {
		for _, as := range []string{"root", "user"} {
			t.Run(tc.name+" as "+as, func(t *testing.T) {
				base := baseDir(t)
				target := rootFile(t, base)
				home := userDir(t, base, "home", alice, 0o755)
				plant(t, home, target)
				err := tc.op(home)
				if as == "user" {
					err = Do(alice, func() error { return tc.op(home) })
				}
				if !errors.Is(err, ErrSymlink) {
					t.Fatalf("got %v, want ErrSymlink", err)
				}
				assertContent(t, target, "root\n")
				assertOnly(t, base, "home", "root-only")
			})
		}
	}
}

// plant makes home/link -> target and home/dirlink -> target's dir.
func plant(t *testing.T, home, target string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(target), filepath.Join(home, "dirlink")); err != nil {
		t.Fatal(err)
	}
}

// assertOnly checks that dir holds exactly names.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range ents {
		have = append(have, e.Name())
	}
	if strings.Join(have, " ") != strings.Join(names, " ") {
		t.Fatalf("%s holds %v, want %v", dir, have, names)
	}
}

func TestWriteFileAtomicReplacesSymlink(t *testing.T) {
	requireRoot(t)
	base := baseDir(t)
	target := rootFile(t, base)
	home := userDir(t, base, "home", alice, 0o755)
	link := filepath.Join(home, "state.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	err := Do(alice, func() error { return WriteFileAtomic(link, []byte("new\n"), 0o644) })
	if err != nil {
		t.Fatal(err)
	}
	assertContent(t, target, "root\n")
	assertContent(t, link, "new\n")
	if st, err := os.Lstat(link); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("%s is not a regular file: %v %v", link, st, err)
	}
	assertOnly(t, home, "state.json")
}

func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name string
		old  string // "" = no file yet
	}{
		{"new file", ""},
		{"replace", "old content that is longer\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			if tc.old != "" {
				os.WriteFile(p, []byte(tc.old), 0o600)
			}
			if err := WriteFileAtomic(p, []byte("new\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			assertContent(t, p, "new\n")
			assertOnly(t, dir, "f")
		})
	}
	// The mode is perm exactly, whatever the umask: gwstate keeps a
	// gateway_state.json's 0664 when it rewrites it (it became 0644).
	t.Run("mode past the umask", func(t *testing.T) {
		old := syscall.Umask(0o022)
		defer syscall.Umask(old)
		p := filepath.Join(t.TempDir(), "f")
		if err := WriteFileAtomic(p, []byte("new\n"), 0o664); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o664 {
			t.Fatalf("mode %v (%v), want 0664", fi.Mode().Perm(), err)
		}
	})
}

func TestMkdirAll(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		wantErr error
	}{
		{"nested", "a/b/c", nil},
		{"exists", "d", nil},
		{"trailing slash and dots", "a/./b/../b/c/", nil},
		{"file in the way", "file/x", syscall.ENOTDIR},
		{"symlink in the way", "link/x", ErrSymlink},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "d"), 0o755)
			os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
			os.Symlink(filepath.Join(dir, "d"), filepath.Join(dir, "link"))
			err := MkdirAll(filepath.Join(dir, tc.path), 0o755)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			if st, err := os.Lstat(filepath.Join(dir, tc.path)); err != nil || !st.IsDir() {
				t.Fatalf("not a directory: %v", err)
			}
		})
	}
}

func TestOpenFileRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	f, err := OpenFile("f", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := OpenFile("f", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second O_EXCL open: got %v, want ErrExist", err)
	}
}

// OpenRegular opens a regular file, and refuses at once, without blocking,
// a FIFO (no writer), a dir and a symlink: what the hermes user may plant
// where root reads.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	file, fifo, link := filepath.Join(dir, "file"), filepath.Join(dir, "fifo"), filepath.Join(dir, "link")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	f, err := OpenRegular(file)
	if err != nil {
		t.Fatalf("a regular file: %v", err)
	}
	f.Close()
	for path, want := range map[string]error{fifo: ErrNotRegular, dir: ErrNotRegular, link: ErrSymlink} {
		if f, err := OpenRegular(path); !errors.Is(err, want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("OpenRegular(%s) = %v, want %v", filepath.Base(path), err, want)
		}
	}
}
