package config

import (
	"maps"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"hinit/svcname"
)

// DefaultServicesMax is the most dynamic services the scandir holds unless
// services_max says otherwise.
const DefaultServicesMax = 1000

const topKeys = "user, main, services, templates, boot, reconcile, services_max, shutdown_timeout, env, compat"

// Default returns the built-in configuration used when hinit.yaml is
// missing: no services, and main runs the CMD as given, like tini.
func Default() *Config {
	return &Config{ServicesMax: DefaultServicesMax, Templates: map[string]*Template{}}
}

// Parse decodes and validates hinit.yaml alone (no drop-ins); file names
// it in messages. The error, if any, is an *Error listing every problem as
// "file:line: msg". An empty file is the built-in defaults.
func Parse(file string, data []byte) (*Config, error) {
	d, c := parseMain(file, data)
	d.checkReconcile(c)
	if err := d.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseMain decodes hinit.yaml without the checks that need the drop-ins.
func parseMain(file string, data []byte) (*decoder, *Config) {
	d := newRootDecoder(file)
	c := Default()
	c.File = file
	if root := d.document(data); root != nil {
		d.config(c, root)
	}
	return d, c
}

// config decodes the top-level mapping into c.
func (d *decoder) config(c *Config, n *yaml.Node) {
	if !isNull(n) && n.Kind != yaml.MappingNode {
		d.at(n, "", "expected a mapping of %s at the top level, got %s", topKeys, describe(n))
		return
	}
	for _, e := range d.entries(n, "") {
		switch e.key {
		case "user":
			c.User = d.user(e.v, e.key)
		case "main":
			c.Main = d.main(e.v, e.key)
		case "services":
			c.Services = d.services(e.v, e.key)
		case "templates":
			c.Templates = d.templates(e.v, e.key)
		case "boot":
			c.Boot = d.hooks(e.v, e.key)
		case "reconcile":
			c.Reconcile, d.reconcileTemplate = d.reconcile(e.v, e.key)
		case "services_max":
			d.intTo(&c.ServicesMax, e.v, e.key, 1)
		case "shutdown_timeout":
			d.durationTo(&c.ShutdownTimeout, e.v, e.key, false)
		case "env":
			c.Env = d.env(e.v, e.key)
		case "compat":
			var ok bool
			if c.Compat, ok = d.strOK(e.v, e.key); ok && c.Compat != CompatS6Overlay {
				d.at(e.v, e.key, "%s is not a known compatibility mode (the one there is: %s)", quote(c.Compat), CompatS6Overlay)
			}
		default:
			d.unknown(e, "", topKeys)
		}
	}
}

// checkReconcile reports a reconcile.template that names no template, once
// every file that may define templates is read.
func (d *decoder) checkReconcile(c *Config) {
	if r := c.Reconcile; r != nil && r.Template != "" && c.Templates[r.Template] == nil {
		d.at(d.reconcileTemplate, "reconcile.template", "%s is not one of the templates (%s)", quote(r.Template), templateNames(c.Templates))
	}
}

// templateNames lists the defined templates for a message.
func templateNames(m map[string]*Template) string {
	if len(m) == 0 {
		return "none defined"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

const mainKeys = "default, wrap, always_wrap, user, remap_exit, env, workdir"

func (d *decoder) main(n *yaml.Node, path string) Main {
	var m Main
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		switch e.key {
		case "default":
			m.Default = d.argv(e.v, p)
		case "wrap":
			m.Wrap = d.strList(e.v, p)
		case "always_wrap":
			m.AlwaysWrap = d.strList(e.v, p)
		case "user":
			m.User = d.user(e.v, p)
		case "remap_exit":
			m.RemapExit = d.remapExit(e.v, p)
		case "env":
			m.Env = d.env(e.v, p)
		case "workdir":
			m.Workdir = d.absPath(e.v, p)
		default:
			d.unknown(e, path, mainKeys)
		}
	}
	return m
}

// services decodes services:, a mapping of name to service, in file order.
func (d *decoder) services(n *yaml.Node, path string) []*Service {
	var out []*Service
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		if err := svcname.Check(e.key); err != nil {
			d.at(e.k, p, "%v", err)
			continue
		}
		s := newService(e.key, SourceStatic, d.file, e.k.Line)
		d.service(s, e.v, e.k, p, fromStatic, staticKeys)
		out = append(out, s)
	}
	return out
}

const hookKeys = "name, command, timeout, on_failure"

// hooks decodes boot:, a list of hooks run in order.
func (d *decoder) hooks(n *yaml.Node, path string) []Hook {
	var out []Hook
	names := map[string]int{}
	for i, item := range d.items(n, path) {
		p := index(path, i)
		h := Hook{Timeout: 60 * time.Second, OnFailure: "stop", File: d.file, Line: item.Line}
		if isNull(item) {
			d.at(item, p, "expected a mapping of %s, got null", hookKeys)
			continue
		}
		for _, e := range d.entries(item, p) {
			q := join(p, e.key)
			switch e.key {
			case "name":
				h.Name = d.str(e.v, q)
			case "command":
				h.Command = d.command(e.v, q)
			case "timeout":
				d.durationTo(&h.Timeout, e.v, q, false)
			case "on_failure":
				h.OnFailure = d.oneOf(e.v, q, "an on_failure action", "stop", "continue")
			default:
				d.unknown(e, p, hookKeys)
			}
		}
		if item.Kind != yaml.MappingNode {
			continue // reported by entries
		}
		if h.Name == "" {
			d.at(item, p, "name is required (it names the hook in log lines)")
		}
		if h.Command == nil && lacks(item, "command") {
			d.at(item, p, "command is required (a list of arguments or a shell command string)")
		}
		if first, dup := names[h.Name]; dup && h.Name != "" {
			// Reported here, and left out: a drop-in's hooks are checked
			// against every file's next, which would say it again.
			d.at(item, p, "hook name %s is used twice (first at line %d)", quote(h.Name), first)
			continue
		}
		names[h.Name] = item.Line
		out = append(out, h)
	}
	return out
}

// reconcile decodes reconcile:; it also returns the node of its template
// key, checked against templates: once the whole file is read.
func (d *decoder) reconcile(n *yaml.Node, path string) (*Reconcile, *yaml.Node) {
	if isNull(n) {
		return nil, nil // "reconcile:" alone is the same as no reconcile
	}
	r := &Reconcile{}
	var tmpl *yaml.Node
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		switch e.key {
		case "home":
			r.Home = d.absPath(e.v, p)
		case "template":
			r.Template, tmpl = d.str(e.v, p), e.v
		case "check_grace":
			d.durationTo(&r.CheckGrace, e.v, p, true)
		default:
			d.unknown(e, path, "home, template, check_grace")
		}
	}
	if n.Kind == yaml.MappingNode {
		if r.Home == "" {
			d.at(n, path, "home is required (the HERMES_HOME to reconcile, e.g. \"${HERMES_HOME:-/opt/data}\")")
		}
		if r.Template == "" {
			d.at(n, path, "template is required (the template of the gateways, e.g. gateway)")
		}
	}
	return r, tmpl
}
