package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"hinit/svcname"
)

// instanceVar is replaced by the instance name in every string field of a
// rendered template.
const instanceVar = "{instance}"

// templates decodes templates:, a mapping of name to template.
func (d *decoder) templates(n *yaml.Node, path string) map[string]*Template {
	out := map[string]*Template{}
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		if err := svcname.CheckTemplate(e.key); err != nil {
			d.at(e.k, p, "%v", err)
			continue
		}
		out[e.key] = d.template(e, p)
	}
	return out
}

// template decodes one template: a service body, validated now with
// {instance} left in its strings, and its overrides applied to copies of
// that body, so that Render has nothing left to decode.
func (d *decoder) template(e entry, path string) *Template {
	t := &Template{Name: e.key, File: d.file, Line: e.k.Line}
	body := newService("", TemplateSource(e.key), d.file, e.k.Line)
	var overrides *entry
	entries := d.entries(e.v, path)
	for i, f := range entries {
		switch {
		case f.key == "overrides":
			overrides = &entries[i]
		case !d.serviceKey(body, f, path, fromTemplate):
			d.unknown(f, path, templateKeys)
		}
	}
	d.needCommand(body, e.v, e.k, path)
	t.body = body
	if overrides != nil {
		t.overrides = d.overrides(t, overrides.v, join(path, "overrides"))
	}
	return t
}

// overrides decodes a template's overrides:, a mapping of instance name to
// the top-level fields that replace the template's for that instance.
func (d *decoder) overrides(t *Template, n *yaml.Node, path string) map[string]*Service {
	out := map[string]*Service{}
	for _, e := range d.entries(n, path) {
		p := join(path, e.key)
		if err := svcname.CheckInstance(t.Name, e.key); err != nil {
			d.at(e.k, p, "%v", err)
			continue
		}
		s := t.body.clone()
		for _, f := range d.entries(e.v, p) {
			if !d.serviceKey(s, f, p, fromOverride) {
				d.unknown(f, p, serviceKeys)
			}
		}
		out[e.key] = s
	}
	return out
}

// Render returns the service <template>-<instance> for a template reference:
// {instance} replaced in every string field, overrides[instance] applied,
// ref.Env merged over the template's env, the stop timeout raised to
// ref.StopTimeout when that is longer. It decodes nothing: the template
// was validated when the configuration was parsed.
func (c *Config) Render(ref Ref) (*Service, error) {
	t := c.Templates[ref.Template]
	if t == nil {
		defined := "none"
		if len(c.Templates) > 0 {
			defined = strings.Join(slices.Sorted(maps.Keys(c.Templates)), ", ")
		}
		return nil, fmt.Errorf("template %s: %w (the configuration's: %s)", quote(ref.Template), ErrUnknownTemplate, defined)
	}
	if err := svcname.CheckInstance(t.Name, ref.Instance); err != nil {
		return nil, fmt.Errorf("render %s: %w: %w", t.Name, ErrInvalidInstance, err)
	}
	src := t.body
	if o := t.overrides[ref.Instance]; o != nil {
		src = o
	}
	s := src.clone()
	s.mapStrings(func(v string) string { return strings.ReplaceAll(v, instanceVar, ref.Instance) })
	s.Name = svcname.Join(t.Name, ref.Instance)
	s.Source = TemplateSource(t.Name)
	if len(ref.Env) > 0 && s.Env == nil {
		s.Env = make(map[string]string, len(ref.Env))
	}
	for k, v := range ref.Env {
		s.Env[k] = v
	}
	if ref.StopTimeout > s.Stop.Timeout && ref.StopTimeout <= MaxRefStopTimeout {
		s.Stop.Timeout = ref.StopTimeout
	}
	return s, nil
}
