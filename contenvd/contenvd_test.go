package contenvd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// testGID is a group that is neither root's nor the test runner's, so a
// wrong owner shows.
const testGID = 10000

func newLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, nil))
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want map[string]string
	}{
		{"empty value kept", []string{"EMPTY="}, map[string]string{"EMPTY": ""}},
		{"newlines inside", []string{"ML=a\nb\n\n"}, map[string]string{"ML": "a\nb\n\n"}},
		{"a trailing newline kept", []string{"NL=v\n", "ONLY=\n"}, map[string]string{"NL": "v\n", "ONLY": "\n"}},
		{"unicode", []string{"U=héllo ☃ 日本"}, map[string]string{"U": "héllo ☃ 日本"}},
		{"equals in value", []string{"K=a=b=c"}, map[string]string{"K": "a=b=c"}},
		{"dots and dashes kept", []string{"a.b=1", "c-d=2"}, map[string]string{"a.b": "1", "c-d": "2"}},
		{"last duplicate wins", []string{"D=1", "D=2"}, map[string]string{"D": "2"}},
		{"binary-ish", []string{"B=\x01\x7f\xff"}, map[string]string{"B": "\x01\x7f\xff"}},
		{"nothing", nil, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "env")
			var log bytes.Buffer
			wrote, err := Write(dir, tc.env, testGID, newLogger(&log))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Read = %q, want %q", got, tc.want)
			}
			if !reflect.DeepEqual(wrote, tc.want) {
				t.Errorf("Write returned %q, want %q", wrote, tc.want)
			}
			if log.Len() != 0 {
				t.Errorf("unexpected warnings: %s", log.String())
			}
		})
	}
}

func TestModesAndOwners(t *testing.T) {
	old := syscall.Umask(0o077) // a strict umask must not change the modes
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "env")
	if _, err := Write(dir, []string{"API_KEY=secret", "E="}, testGID, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	check := func(p string, wantMode os.FileMode) {
		t.Helper()
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if st.Mode() != wantMode {
			t.Errorf("%s: mode %v, want %v", p, st.Mode(), wantMode)
		}
		if int(sys.Uid) != os.Geteuid() || sys.Gid != testGID {
			t.Errorf("%s: owner %d:%d, want %d:%d", p, sys.Uid, sys.Gid, os.Geteuid(), testGID)
		}
	}
	check(dir, os.ModeDir|0o750)
	check(filepath.Join(dir, "API_KEY"), 0o640)
	check(filepath.Join(dir, "E"), 0o640)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("dir holds %d entries, want 2 (no temporaries left)", len(ents))
	}
}

func TestInvalidNamesSkipped(t *testing.T) {
	tests := []struct {
		name  string
		entry string
	}{
		{"empty name", "=x"},
		{"dot", ".=x"},
		{"dotdot", "..=x"},
		{"dot-file", ".hidden=x"},
		{"slash", "a/b=x"},
		{"traversal", "../../etc/passwd=x"},
		{"NUL", "a\x00b=x"},
		{"too long", strings.Repeat("A", 256) + "=x"},
		{"no equals", "JUSTNAME"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "env")
			var log bytes.Buffer
			if _, err := Write(dir, []string{"OK=1", tc.entry}, testGID, newLogger(&log)); err != nil {
				t.Fatal(err)
			}
			got, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"OK": "1"}; !reflect.DeepEqual(got, want) {
				t.Errorf("Read = %q, want %q", got, want)
			}
			if n := strings.Count(log.String(), "level=WARN"); n != 1 {
				t.Errorf("%d warnings, want 1: %s", n, log.String())
			}
			if ents, _ := os.ReadDir(root); len(ents) != 1 {
				t.Errorf("something was written beside the env dir: %v", ents)
			}
		})
	}
}

func TestLongestNameKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env")
	name := strings.Repeat("A", 255)
	if _, err := Write(dir, []string{name + "=v"}, -1, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if got, _ := Read(dir); got[name] != "v" {
		t.Errorf("255-byte name lost: %q", got)
	}
}

// A symlink at a variable's name (which only root could plant, in the
// root-owned dir Write just made) is never written through: the write fails.
func TestSymlinkVarNotFollowed(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "env")
	victim := filepath.Join(root, "victim")
	if err := os.WriteFile(victim, []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, nil, testGID, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "KEY")); err != nil {
		t.Fatal(err)
	}
	if err := writeVar(dir, "KEY", "secret", testGID); !errors.Is(err, os.ErrExist) {
		t.Errorf("writeVar over a symlink: %v, want an error wrapping os.ErrExist", err)
	}
	assertFile(t, victim, "untouched")
}

// A symlink planted at the directory itself is removed, not followed: the
// directory it pointed to keeps its content and gets no variables.
func TestSymlinkDirNotFollowed(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	os.Mkdir(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644)
	dir := filepath.Join(root, "env")
	os.Symlink(outside, dir)
	if _, err := Write(dir, []string{"K=v"}, testGID, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(outside, "keep"), "x")
	if _, err := os.Lstat(filepath.Join(outside, "K")); err == nil {
		t.Error("variable written through the symlinked dir")
	}
	if st, _ := os.Lstat(dir); !st.IsDir() {
		t.Errorf("env dir is %v, want a real directory", st.Mode())
	}
}

// Write starts from scratch: variables of a previous boot do not survive.
func TestRewriteDropsOld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env")
	discard := slog.New(slog.DiscardHandler)
	if _, err := Write(dir, []string{"OLD=1"}, -1, discard); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, []string{"NEW=2"}, -1, discard); err != nil {
		t.Fatal(err)
	}
	if got, _ := Read(dir); !reflect.DeepEqual(got, map[string]string{"NEW": "2"}) {
		t.Errorf("Read = %q", got)
	}
}

// A write that fails (a full /run) leaves no env dir at all, never one
// holding the variables written before the failure: readers would take it
// for the whole environment and miss an API key. Nothing is left beside it
// either, and the room it took is given back.
func TestWriteAllOrNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	root := t.TempDir()
	if err := unix.Mount("tmpfs", root, "tmpfs", 0, "size=8k,mode=755"); err != nil {
		t.Skipf("cannot mount a tiny tmpfs to fill up: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(root, unix.MNT_DETACH) })
	dir := filepath.Join(root, "env")
	var env []string // a page each: more than the tmpfs holds
	for i := range 8 {
		env = append(env, fmt.Sprintf("VAR%d=%d", i, i))
	}
	env = append(env, "ZZ_API_KEY=sk-test")
	_, err := Write(dir, env, testGID, slog.New(slog.DiscardHandler))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Write on a full tmpfs: %v, want ENOSPC", err)
	}
	if _, serr := os.Lstat(dir); !errors.Is(serr, fs.ErrNotExist) {
		got, _ := Read(dir)
		t.Errorf("after a failed Write the env dir is there (%v), holding %q; want none", serr, got)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("left beside the env dir: %v", ents)
	}
	if _, err := Write(dir, env[:2], testGID, slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("Write after the failure, with room for it: %v", err)
	}
}

// Hooks may add files, subdirs, symlinks and FIFOs; Read takes only regular,
// non-dot files and never blocks.
func TestReadSkips(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "env")
	if _, err := Write(dir, []string{"A=1"}, -1, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "HOOK"), []byte("added"), 0o640)
	os.WriteFile(filepath.Join(dir, ".tmp-x"), []byte("partial"), 0o640)
	os.Mkdir(filepath.Join(dir, "SUB"), 0o755)
	os.WriteFile(filepath.Join(root, "target"), []byte("outside"), 0o644)
	os.Symlink(filepath.Join(root, "target"), filepath.Join(dir, "LINK"))
	if err := syscall.Mkfifo(filepath.Join(dir, "FIFO"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := Environ(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A=1", "HOOK=added"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
}

// A hook's file reads as s6-overlay's with-contenv reads it (s6-envdir
// -Lf, checked against Debian's s6 2.11): one trailing newline dropped
// (`echo URL >NAME`), other whitespace kept, a NUL read as a newline. An
// empty file stays an empty value (s6 would unset it).
func TestReadAsS6Envdir(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"ECHO": "v\n", "TWO": "v\n\n", "CRLF": "v\r\n", "LINES": "a\nb\n",
		"SPACES": "x  \n", "NL": "\n", "NUL": "p\x00q", "EMPTY": "", "RAW": "v"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ECHO": "v", "TWO": "v\n", "CRLF": "v\r", "LINES": "a\nb",
		"SPACES": "x  ", "NL": "", "NUL": "p\nq", "EMPTY": "", "RAW": "v"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Read = %q, want %q", got, want)
	}
}

func TestReadMissingDir(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want not-exist", err)
	}
}

func TestEnvironSorted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env")
	env := []string{"Z=1", "A=2", "M=", "a=3"}
	if _, err := Write(dir, env, -1, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	got, err := Environ(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A=2", "M=", "Z=1", "a=3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
}

func assertFile(t *testing.T, p, want string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("%s = %q, want %q", p, b, want)
	}
}
