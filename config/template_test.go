package config

import (
	"errors"
	"hinit/svcname"
	"reflect"
	"strings"
	"testing"
	"time"
)

const renderConfig = `templates:
  worker:
    command: "run --name {instance} --home ${HOME}"
    user: "{instance}"
    workdir: /srv/{instance}
    env: {NAME: "{instance}", KEEP: "1"}
    enabled: "${ENABLE_{instance}}"
    ready: {tcp: "127.0.0.1:9{instance}"}
    stop: {signal: INT, timeout: 3s, planned_stop_marker: "/m/{instance}"}
    log: {dir: "/log/{instance}", keep: 3}
    overrides:
      "1":
        env: {ONLY: "{instance}"}
        stop: {timeout: 1s}
        restart: never
      big:
        backoff: {initial: 1s, max: 2s}
        essential: true
`

func TestRender(t *testing.T) {
	c, err := Parse("hinit.yaml", []byte(renderConfig))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		ref   Ref
		check func(t *testing.T, s *Service)
	}{
		{
			name: "every string field",
			ref:  Ref{Template: "worker", Instance: "a1"},
			check: func(t *testing.T, s *Service) {
				want := []string{"/bin/sh", "-c", "run --name a1 --home ${HOME}"}
				if !reflect.DeepEqual(s.Command, want) {
					t.Errorf("command = %q, want %q", s.Command, want)
				}
				got := []string{s.Name, string(s.Source), s.User, s.Workdir, s.Env["NAME"], s.Enabled, s.Ready.TCP, s.Stop.PlannedStopMarker, s.Log.Dir}
				want = []string{"worker-a1", "template:worker", "a1", "/srv/a1", "a1", "${ENABLE_a1}", "127.0.0.1:9a1", "/m/a1", "/log/a1"}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("fields = %q, want %q", got, want)
				}
				if s.Stop.Signal != "INT" || s.Stop.Timeout != 3*time.Second || s.Log.Keep != 3 || s.Log.MaxSize != 1<<20 {
					t.Errorf("stop %+v log %+v", s.Stop, s.Log)
				}
			},
		},
		{
			name: "overrides replace whole fields",
			ref:  Ref{Template: "worker", Instance: "1"},
			check: func(t *testing.T, s *Service) {
				if want := map[string]string{"ONLY": "1"}; !reflect.DeepEqual(s.Env, want) {
					t.Errorf("env = %v, want %v (replaced, not merged)", s.Env, want)
				}
				if want := (Stop{Signal: "TERM", Timeout: time.Second}); s.Stop != want {
					t.Errorf("stop = %+v, want %+v (defaults for keys the override leaves out)", s.Stop, want)
				}
				if s.Restart != RestartNever || s.User != "1" || s.Log.Dir != "/log/1" {
					t.Errorf("restart %q user %q log.dir %q", s.Restart, s.User, s.Log.Dir)
				}
			},
		},
		{
			name: "a ref's longer stop timeout replaces the template's, a shorter one does not",
			ref:  Ref{Template: "worker", Instance: "a1", StopTimeout: 50 * time.Second},
			check: func(t *testing.T, s *Service) {
				if s.Stop.Timeout != 50*time.Second {
					t.Errorf("stop timeout %v, want 50s", s.Stop.Timeout)
				}
				short, _ := c.Render(Ref{Template: "worker", Instance: "a1", StopTimeout: time.Second})
				if short.Stop.Timeout != 3*time.Second {
					t.Errorf("a 1s ref stop timeout gave %v, want the template's 3s", short.Stop.Timeout)
				}
			},
		},
		{
			name: "ref env merged over the template env",
			ref:  Ref{Template: "worker", Instance: "big", Env: map[string]string{"KEEP": "2", "EXTRA": "{instance}"}},
			check: func(t *testing.T, s *Service) {
				want := map[string]string{"NAME": "big", "KEEP": "2", "EXTRA": "{instance}"}
				if !reflect.DeepEqual(s.Env, want) {
					t.Errorf("env = %v, want %v", s.Env, want)
				}
				if !s.Essential || s.Backoff.Initial != time.Second || s.Backoff.ResetAfter != 10*time.Second {
					t.Errorf("essential %v backoff %+v", s.Essential, s.Backoff)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := c.Render(tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
			s.Env["NAME"] = "mutated"
			s.Command[0] = "mutated"
			again, err := c.Render(tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if again.Env["NAME"] == "mutated" || again.Command[0] == "mutated" {
				t.Error("a rendered service shares memory with its template")
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	c, err := Parse("hinit.yaml", []byte(renderConfig))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ref  Ref
		want error
	}{
		{"unknown template", Ref{Template: "gateway", Instance: "coder"}, ErrUnknownTemplate},
		{"empty instance", Ref{Template: "worker"}, ErrInvalidInstance},
		{"dot in instance", Ref{Template: "worker", Instance: "a.b"}, ErrInvalidInstance},
		{"path in instance", Ref{Template: "worker", Instance: "../x"}, ErrInvalidInstance},
		{"uppercase instance", Ref{Template: "worker", Instance: "Coder"}, ErrInvalidInstance},
		{"too long", Ref{Template: "worker", Instance: strings.Repeat("a", svcname.MaxProfileLen+1)}, ErrInvalidInstance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := c.Render(tt.ref)
			if !errors.Is(err, tt.want) || s != nil {
				t.Errorf("Render = %v, %v; want %v", s, err, tt.want)
			}
		})
	}
	// The message names what is defined: a typo is seen at once.
	if _, err := c.Render(Ref{Template: "gateway", Instance: "coder"}); err == nil || err.Error() != `template "gateway": no such template (the configuration's: worker)` {
		t.Errorf("Render of an unknown template: %v", err)
	}
	if _, err := c.Render(Ref{Template: "worker", Instance: strings.Repeat("a", svcname.MaxProfileLen)}); err != nil {
		t.Errorf("longest instance: %v", err)
	}
}

func BenchmarkRender(b *testing.B) {
	c, err := Parse("hinit.yaml", []byte(specTemplates))
	if err != nil {
		b.Fatal(err)
	}
	ref := Ref{Template: "gateway", Instance: "coder", Env: map[string]string{"K": "V"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Render(ref); err != nil {
			b.Fatal(err)
		}
	}
}
