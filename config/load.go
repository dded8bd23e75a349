package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"
)

// DropInDir is the directory of drop-ins beside hinit.yaml: a derived image
// adds a service by adding a file there instead of forking hinit.yaml.
const DropInDir = "hinit.d"

// dropInKeys are the top-level keys a drop-in may hold; the others are the
// image's, set once in hinit.yaml.
const dropInKeys = "services, templates, boot"

// Load reads the configuration file at path and the drop-ins of the
// hinit.d directory beside it: every *.yaml file there (names starting with
// "." skipped), in name order, whose services, templates and boot hooks are
// added after hinit.yaml's. A name defined twice, in one file or two, is an
// error naming both places. A missing path is an error wrapping
// fs.ErrNotExist, so the caller can fall back to Default, unless hinit.d
// holds drop-ins: those are never ignored silently. The error, if any, is an
// *Error with every problem of every file when the files were read.
func Load(path string) (*Config, error) {
	dir := filepath.Join(filepath.Dir(path), DropInDir)
	files, err := dropIns(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && len(files) > 0 {
		return nil, fmt.Errorf("read config: %s is missing but %s holds %d drop-in(s): create it (an empty file is the defaults)", path, dir, len(files))
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if why := writableByOthers(path); why != "" {
		return nil, fmt.Errorf("read config: %s %s", path, why)
	}
	d, c := parseMain(path, data)
	decoders := []*decoder{d}
	seen := newNames(c)
	for _, f := range files {
		decoders = append(decoders, mergeDropIn(c, f, seen))
		c.DropIns = append(c.DropIns, f)
	}
	d.checkReconcile(c)
	all := &Error{}
	for _, d := range decoders {
		if err := d.err(); err != nil {
			var ce *Error
			errors.As(err, &ce)
			all.Problems = append(all.Problems, ce.Problems...)
			all.More += ce.More
		}
	}
	if len(all.Problems) > 0 {
		return nil, all
	}
	return c, nil
}

// dropIns lists the *.yaml files of dir in name order; a missing dir is none.
// A dir or file writable by others, or owned by neither root nor the
// caller, is refused: a drop-in may run anything as anyone.
func dropIns(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if why := unsafeOwner(dir); why != "" {
		return nil, fmt.Errorf("read config: %s %s", dir, why)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".yaml") {
			continue
		}
		out = append(out, filepath.Join(dir, name))
	}
	slices.Sort(out)
	return out, nil
}

// writableByOthers says why path may not hold configuration that root
// runs (the trust rule of package trust, for files root reads): it is
// writable by others, or owned by root and writable by its group; "" when
// neither.
func writableByOthers(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	st := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode().Perm()&0o002 != 0:
		return fmt.Sprintf("is writable by others (chmod o-w %s)", path)
	case st.Uid == 0 && fi.Mode().Perm()&0o020 != 0:
		return fmt.Sprintf("is owned by root but writable by its group (chmod g-w %s)", path)
	}
	return ""
}

// unsafeOwner says why path may not hold a drop-in: writableByOthers, or
// owned by a user other than root and the caller; "" when it may.
func unsafeOwner(path string) string {
	if why := writableByOthers(path); why != "" {
		return why
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	st := fi.Sys().(*syscall.Stat_t)
	switch {
	case st.Uid != 0 && int(st.Uid) != os.Geteuid():
		return fmt.Sprintf("is owned by uid %d, expected root", st.Uid)
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return "is not a regular file"
	}
	return ""
}

// mergeDropIn decodes drop-in file into its own decoder and adds its
// services, templates and boot hooks to c; the decoder holds its problems.
func mergeDropIn(c *Config, file string, seen *names) *decoder {
	d := newRootDecoder(file)
	if why := unsafeOwner(file); why != "" {
		d.add(0, "refused: it %s", why)
		return d
	}
	data, err := os.ReadFile(file)
	if err != nil {
		d.add(0, "%v", err)
		return d
	}
	root := d.document(data)
	if root == nil {
		return d
	}
	if !isNull(root) && root.Kind != yaml.MappingNode {
		d.at(root, "", "expected a mapping of %s at the top level, got %s", dropInKeys, describe(root))
		return d
	}
	for _, e := range d.entries(root, "") {
		switch e.key {
		case "services":
			for _, s := range d.services(e.v, e.key) {
				if seen.add(d, "services", s.Name, s.File, s.Line) {
					c.Services = append(c.Services, s)
				}
			}
		case "templates":
			for _, t := range d.templates(e.v, e.key) {
				if seen.add(d, "templates", t.Name, t.File, t.Line) {
					c.Templates[t.Name] = t
				}
			}
		case "boot":
			for _, h := range d.hooks(e.v, e.key) {
				if h.Name == "" || seen.add(d, "boot", h.Name, h.File, h.Line) {
					c.Boot = append(c.Boot, h)
				}
			}
		case "user", "main", "reconcile", "services_max", "shutdown_timeout", "env", "compat":
			d.at(e.k, e.key, "belongs in %s, not in a drop-in (a drop-in holds %s)", filepath.Base(c.File), dropInKeys)
		default:
			d.unknown(e, "", dropInKeys)
		}
	}
	return d
}

// names records where each service, template and boot hook is defined, to
// report one defined twice across files.
type names struct {
	at map[string]string // "services.web" -> "file:line"
}

// newNames records the names hinit.yaml defines.
func newNames(c *Config) *names {
	n := &names{at: map[string]string{}}
	for _, s := range c.Services {
		n.at["services."+s.Name] = fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	for _, t := range c.Templates {
		n.at["templates."+t.Name] = fmt.Sprintf("%s:%d", t.File, t.Line)
	}
	for _, h := range c.Boot {
		n.at["boot."+h.Name] = fmt.Sprintf("%s:%d", h.File, h.Line)
	}
	return n
}

// add records kind.name defined at file:line, or reports it to d when it is
// already defined elsewhere and returns false.
func (n *names) add(d *decoder, kind, name, file string, line int) bool {
	k := kind + "." + name
	if first, dup := n.at[k]; dup {
		what := join(kind, name)
		if kind == "boot" {
			what = "boot hook " + quote(name)
		}
		d.add(line, "%s: defined twice (first at %s)", what, first)
		return false
	}
	n.at[k] = fmt.Sprintf("%s:%d", file, line)
	return true
}
