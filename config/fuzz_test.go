package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that no input panics Parse, and that every error is an
// *Error of single "hinit.yaml:LINE: msg" lines.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.yaml))
	}
	f.Add([]byte(specTemplates))
	f.Add([]byte(renderConfig))
	f.Add([]byte("services:\n  dashboard:\n" + indent(specService, "    ")))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("hinit.yaml", data)
		if err != nil {
			checkFuzzError(t, err, "hinit.yaml:", true)
			return
		}
		for name := range c.Templates {
			for _, instance := range []string{"x", "default"} {
				if _, err := c.Render(Ref{Template: name, Instance: instance}); err != nil && len(name) < 240 {
					t.Fatalf("Render(%s, %s) of a valid config: %v", name, instance, err)
				}
			}
		}
		for _, s := range c.Services {
			s.Expanded(map[string]string{"HOME": "/h"})
		}
	})
}

// FuzzParseService checks that no input panics ParseService.
func FuzzParseService(f *testing.F) {
	for _, tc := range serviceCases {
		f.Add([]byte(tc.yaml), tc.dir)
	}
	f.Add([]byte(specService), "dashboard")
	f.Add([]byte("template: gateway\ninstance: coder\nenv: {K: V}\n"), "gateway-coder")
	f.Fuzz(func(t *testing.T, data []byte, dir string) {
		s, ref, err := ParseService("service.yaml", data, dir)
		switch {
		case err != nil:
			checkFuzzError(t, err, "service.yaml", false)
		case s == nil && ref == nil, s != nil && ref != nil:
			t.Fatalf("ParseService = %v, %v, nil: want exactly one", s, ref)
		case s != nil && len(s.Command) == 0:
			t.Fatalf("service without a command: %+v", s)
		}
	})
}

// checkFuzzError checks the shape of a parse error.
func checkFuzzError(t *testing.T, err error, prefix string, needLine bool) {
	var perr *Error
	if !errors.As(err, &perr) || len(perr.Problems) == 0 {
		t.Fatalf("error %v (%T) is not a non-empty *Error", err, err)
	}
	for _, p := range perr.Problems {
		line := p.String()
		if !strings.HasPrefix(line, prefix) || strings.ContainsAny(line, "\n\r") || (needLine && p.Line < 1) {
			t.Fatalf("malformed problem %q", line)
		}
	}
}
