package contenvd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is the container environment dir of the runtime dir runtimeDir:
// what hinit writes at boot and with-contenv reads.
func Dir(runtimeDir string) string { return filepath.Join(runtimeDir, "env") }

// Read returns the variables in dir as they are now: every service start
// calls it, so that changes made by boot hooks are seen. It costs one
// ReadDir and one open+read per variable. Dot-files (temporaries of a writer)
// and anything that is not a regular file (subdirs, symlinks, FIFOs) are
// skipped; a file removed while Read runs is skipped too.
func Read(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read env dir %s: %w", dir, err)
	}
	env := make(map[string]string, len(entries))
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}
		value, ok, err := readVar(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if ok {
			env[name] = value
		}
	}
	return env, nil
}

// Environ returns Read's variables as sorted KEY=VALUE entries, ready for
// exec.Cmd.Env.
func Environ(dir string) ([]string, error) {
	env, err := Read(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// readVar reads one variable file. It never follows a symlink and never
// blocks on a FIFO swapped in after ReadDir; ok is false when the file is
// gone or is no longer a regular file. Raw system calls: every service start
// reads every variable.
func readVar(p string) (value string, ok bool, err error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("open %s: %w", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", false, fmt.Errorf("stat %s: %w", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", false, nil
	}
	b := make([]byte, 0, st.Size+1)
	for {
		n, err := unix.Read(fd, b[len(b):cap(b)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return "", false, fmt.Errorf("read %s: %w", p, err)
		case n == 0:
			return envValue(b), true, nil
		}
		b = b[:len(b)+n]
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// envValue is a variable file's value as s6-overlay's with-contenv reads it
// (s6-envdir -Lf): the content with one trailing newline dropped, so that
// `echo URL >NAME` in a boot hook gives URL, and each NUL read as a newline
// (no environment holds a NUL: exec would refuse every start). Write adds
// that newline to a value that ends with one.
func envValue(b []byte) string {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return string(bytes.ReplaceAll(b, []byte{0}, []byte("\n")))
}
