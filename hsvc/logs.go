package hsvc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"hinit/control"
	"hinit/svclog"
)

// runLogs: hsvc logs NAME [-n N] [-f] [--raw]. hinit only says where the
// log is (status); hsvc reads the file itself, with the caller's own
// rights. To a terminal, control characters are escaped (escapingWriter).
func runLogs(c *cli, args []string) error {
	fs := newFlags("logs")
	n := fs.Int("n", 20, "print the last `N` lines")
	follow := fs.Bool("f", false, "then print new lines as they come, across rotations")
	raw := fs.Bool("raw", false, "to a terminal too, print control characters as they are (escaped by default: ESC as \\x1b)")
	names, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if err := c.oneName(names); err != nil {
		return err
	}
	if *n < 0 {
		return c.usageErr("-n must not be negative")
	}
	path, err := c.logPath(names[0])
	if err != nil {
		return err
	}
	if *raw || !isTerminal(c.stdout) {
		return c.showLog(path, *n, *follow)
	}
	out := &escapingWriter{w: c.stdout}
	c.stdout = out
	defer func() { c.stdout = out.w }()
	err = c.showLog(path, *n, *follow)
	if ferr := out.flush(); err == nil {
		err = ferr
	}
	return err
}

// logPath asks hinit where the log of name is.
func (c *cli) logPath(name string) (string, error) {
	resp, err := c.do(&control.Request{Verb: control.VerbStatus, Names: []string{name}}, 0)
	if err != nil {
		return "", err
	}
	for _, s := range resp.Services {
		if s.Name != name {
			continue
		}
		if s.LogPath == "" {
			return "", exitf(control.CodeFailed, "%s has no log file: its output goes to the container's console (docker logs)", name)
		}
		return s.LogPath, nil
	}
	return "", exitf(control.CodeNoService, "no such service: %s; see hsvc list", name)
}

// showLog prints the last n lines of path, then follows it if asked.
func (c *cli) showLog(path string, n int, follow bool) error {
	if follow {
		// Before the open: every archive made after this is the file
		// opened or a newer one, for follow to print.
		c.markArchives(filepath.Dir(path))
	}
	f, err := openLog(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && follow:
		// nothing logged yet: follow waits for the file
	case errors.Is(err, fs.ErrNotExist):
		return exitf(control.CodeFailed, "no log at %s yet: nothing written there so far (not started yet?); hsvc logs -f waits for it", path)
	case err != nil:
		return err
	default:
		err = tail(path, f, n, c.stdout)
		if err != nil || !follow {
			f.Close()
		}
		if err != nil {
			return exitf(control.CodeFailed, "read %s: %v", path, err)
		}
	}
	if !follow {
		return nil
	}
	return c.follow(path, f) // follow closes f
}

// openLog opens a log file as svclog.OpenRead does (no symlink, no FIFO),
// with a hint when the caller may not read it.
func openLog(path string) (*os.File, error) {
	f, err := svclog.OpenRead(path)
	if errors.Is(err, fs.ErrPermission) {
		return nil, exitf(control.CodePermission, "permission denied reading %s: run hsvc as the service's user or as root", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}
