package config

import (
	"gopkg.in/yaml.v3"

	"hinit/svcname"
)

const refKeys = "template, instance, env, stop_timeout"

// ParseService decodes the service.yaml of scandir dir name (file names it
// in messages). The file holds either a full service (the keys of a
// services: entry but protected), returned as *Service with Source
// "scandir", or a template reference, returned as *Ref for Config.Render;
// a reference must render to the dir's own name. Pass name "" to skip the
// name checks. The error, if any, is an *Error of at most MaxProblems.
func ParseService(file string, data []byte, name string) (*Service, *Ref, error) {
	d := newDecoder(file)
	if name != "" {
		if err := svcname.Check(name); err != nil {
			d.add(0, "%v", err)
		}
	}
	root := d.document(data)
	var (
		s   *Service
		ref *Ref
	)
	switch {
	case len(d.list) > 0:
	case isNull(root):
		d.add(1, "the file is empty, expected a service (command: ...) or a template reference (template: NAME, instance: NAME)")
	case root.Kind != yaml.MappingNode:
		d.at(root, "", "expected a service (command: ...) or a template reference (template: NAME, instance: NAME), got %s", describe(root))
	case hasKey(root, "template"):
		ref = d.ref(root, name)
	default:
		s = newService(name, SourceScandir, file, root.Line)
		d.service(s, root, root, "", fromScandir, serviceKeys)
	}
	if err := d.err(); err != nil {
		return nil, nil, err
	}
	return s, ref, nil
}

// ref decodes a template reference {template, instance, env}.
func (d *decoder) ref(n *yaml.Node, name string) *Ref {
	r := &Ref{}
	var instance *yaml.Node
	for _, e := range d.entries(n, "") {
		switch e.key {
		case "template":
			r.Line = e.v.Line
			var ok bool
			if r.Template, ok = d.strOK(e.v, e.key); !ok {
				break
			}
			if err := svcname.CheckTemplate(r.Template); err != nil {
				d.at(e.v, e.key, "%v", err)
			}
		case "instance":
			r.Instance, instance = d.str(e.v, e.key), e.v
		case "env":
			r.Env = d.env(e.v, e.key)
		case "stop_timeout":
			d.durationTo(&r.StopTimeout, e.v, e.key, false)
			if r.StopTimeout > MaxRefStopTimeout {
				d.at(e.v, e.key, "%s is above %v, the longest stop timeout a template reference may ask for", quote(e.v.Value), MaxRefStopTimeout)
			}
		default:
			d.at(e.k, join("", e.key), "not allowed in a template reference (expected only %s)", refKeys)
		}
	}
	switch {
	case instance == nil:
		d.at(n, "", "instance is required with template (e.g. template: gateway, instance: coder)")
	case svcname.CheckInstanceName(r.Instance) != nil:
		d.at(instance, "instance", "%v", svcname.CheckInstanceName(r.Instance))
	case svcname.Valid(r.Template) && svcname.CheckInstance(r.Template, r.Instance) != nil:
		d.at(instance, "instance", "%v", svcname.CheckInstance(r.Template, r.Instance))
	}
	if full := svcname.Join(r.Template, r.Instance); name != "" && r.Template != "" && r.Instance != "" && full != name {
		d.at(n, "", "template reference renders %s, which does not match its directory name %s", quote(full), quote(name))
	}
	return r
}
