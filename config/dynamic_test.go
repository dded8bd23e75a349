package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const svcFile = "/run/service/gateway-coder/service.yaml"

// serviceCases are invalid scandir service.yaml files and their problems.
// FuzzParseService seeds its corpus from them.
var serviceCases = []struct {
	name string
	dir  string
	yaml string
	want []string
}{
	{
		name: "stop_timeout of a reference above an hour",
		dir:  "gateway-coder",
		yaml: "template: gateway\ninstance: coder\nstop_timeout: 2h\n",
		want: []string{svcFile + `:3: stop_timeout: "2h" is above 1h0m0s, the longest stop timeout a template reference may ask for`},
	},
	{
		name: "a template that is a list: one line",
		dir:  "gateway-coder",
		yaml: "template: [gateway]\ninstance: coder\n",
		want: []string{svcFile + `:1: template: expected a string, got a list`},
	},
	{
		name: "empty file",
		yaml: "",
		want: []string{svcFile + `:1: the file is empty, expected a service (command: ...) or a template reference (template: NAME, instance: NAME)`},
	},
	{
		name: "only comments",
		yaml: "# writing...\n",
		want: []string{svcFile + `:1: the file is empty, expected a service (command: ...) or a template reference (template: NAME, instance: NAME)`},
	},
	{
		name: "cut in a flow list",
		yaml: "command: [hermes, -p, co",
		want: []string{svcFile + `:1: invalid YAML: did not find expected ',' or ']'`},
	},
	{
		name: "cut in a quoted string",
		yaml: "template: gateway\ninstance: \"cod",
		want: []string{svcFile + `:2: invalid YAML: found unexpected end of stream`},
	},
	{
		name: "cut after a key",
		yaml: "restart: always\ncomm",
		want: []string{svcFile + `:2: invalid YAML: could not find expected ':'`},
	},
	{
		name: "no command yet",
		yaml: "restart: always\n",
		want: []string{svcFile + `:1: command is required (a list of arguments or a shell command string)`},
	},
	{
		name: "not a mapping",
		yaml: "gateway coder\n",
		want: []string{svcFile + `:1: expected a service (command: ...) or a template reference (template: NAME, instance: NAME), got "gateway coder"`},
	},
	{
		name: "protected",
		yaml: "command: [x]\nprotected: true\n",
		want: []string{svcFile + `:2: protected: only static services (services: in hinit.yaml) may be protected`},
	},
	{
		name: "unknown key",
		yaml: "command: [x]\noverrides: {}\n",
		want: []string{svcFile + `:2: overrides: unknown key (expected one of command, user, workdir, env, enabled, restart, no_restart_exit_codes, restart_now_exit_codes, backoff, give_up, stop, ready, log, essential, signals)`},
	},
	{
		name: "ref without instance",
		yaml: "template: gateway\n",
		want: []string{svcFile + `:1: instance is required with template (e.g. template: gateway, instance: coder)`},
	},
	{
		name: "ref with service keys",
		dir:  "gateway-coder",
		yaml: "template: gateway\ninstance: coder\ncommand: [sh]\n",
		want: []string{svcFile + `:3: command: not allowed in a template reference (expected only template, instance, env, stop_timeout)`},
	},
	{
		name: "ref with bad names",
		yaml: "template: Gateway\ninstance: my.profile\n",
		want: []string{
			svcFile + `:1: template: "Gateway" is not a valid template name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`,
			svcFile + `:2: instance: "my.profile" is not a valid instance name (expected ^[a-z0-9][a-z0-9_-]*$ (no dot), at most 64 bytes)`,
		},
	},
	{
		name: "ref for another dir",
		dir:  "gateway-coder",
		yaml: "template: gateway\ninstance: other\n",
		want: []string{svcFile + `:1: template reference renders "gateway-other", which does not match its directory name "gateway-coder"`},
	},
	{
		name: "ref with a bad env",
		yaml: "template: gateway\ninstance: coder\nenv: [A=1]\n",
		want: []string{svcFile + `:3: env: expected a mapping, got a list`},
	},
	{
		name: "invalid dir name",
		dir:  ".gateway-coder.tmp",
		yaml: "command: [x]\n",
		want: []string{svcFile + `: ".gateway-coder.tmp" is not a valid service name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`},
	},
}

func TestParseServiceErrors(t *testing.T) {
	for _, tc := range serviceCases {
		t.Run(tc.name, func(t *testing.T) {
			s, ref, err := ParseService(svcFile, []byte(tc.yaml), tc.dir)
			if s != nil || ref != nil {
				t.Errorf("ParseService returned %+v, %+v with error %v", s, ref, err)
			}
			checkProblems(t, err, tc.want)
		})
	}
}

func TestParseService(t *testing.T) {
	tests := []struct {
		name    string
		dir     string
		yaml    string
		wantSvc *Service
		wantRef *Ref
	}{
		{
			name:    "template reference",
			dir:     "gateway-coder",
			yaml:    "template: gateway\ninstance: coder\nenv: {K: V}\n",
			wantRef: &Ref{Template: "gateway", Instance: "coder", Env: map[string]string{"K": "V"}, Line: 1},
		},
		{
			name:    "template reference with a stop timeout",
			dir:     "gateway-coder",
			yaml:    "instance: coder\ntemplate: gateway\nstop_timeout: 50s\n",
			wantRef: &Ref{Template: "gateway", Instance: "coder", StopTimeout: 50 * time.Second, Line: 2},
		},
		{
			name:    "reference without a dir name",
			yaml:    "{template: gateway, instance: default}",
			wantRef: &Ref{Template: "gateway", Instance: "default", Line: 1},
		},
		{
			name: "service",
			dir:  "web",
			yaml: "# a comment first\n\ncommand: web --port 80\nrestart: on-failure\n",
			wantSvc: &Service{
				Name: "web", Source: "scandir", File: svcFile, Line: 3,
				Command: []string{"/bin/sh", "-c", "web --port 80"},
				Restart: RestartOnFailure,
				Backoff: defaultBackoff, Stop: defaultStop, Log: defaultLog,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ref, err := ParseService(svcFile, []byte(tt.yaml), tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, tt.wantSvc) || !reflect.DeepEqual(ref, tt.wantRef) {
				t.Errorf("ParseService =\n %+v, %+v\nwant %+v, %+v", s, ref, tt.wantSvc, tt.wantRef)
			}
		})
	}
}

// A scandir definition (or a register's) of at most 64 KiB decodes to at
// most 64 KiB of strings, each alias counted every time it is used: an
// anchor of 40 KiB named 8,000 times in command decoded to 330 MB of argv,
// which every start copied for exec (E2BIG), restart after restart. One
// line says so; a few aliases of a short string still parse.
func TestAliasesCountEachTime(t *testing.T) {
	val := strings.Repeat("x", 40<<10)
	head := "command: [/bin/true, &a '" + val + "'"
	for _, yml := range []string{
		head + strings.Repeat(",*a", (64<<10-len(head)-10)/3) + "]\n",
		"command: [/bin/true]\nenv: {A: &a '" + val + "', B: *a, C: *a}\n",
	} {
		_, _, err := ParseService("/run/service/x/service.yaml", []byte(yml), "x")
		want := "the definition's strings come to more than 65536 bytes (aliases count each time they are used)"
		if err == nil || !strings.Contains(err.Error(), want) || strings.Count(err.Error(), "more than 65536") != 1 {
			t.Errorf("%.60q...: err %v, want one line saying %q", yml, err, want)
		}
	}
	ok := "command: [/bin/echo, &s hello, *s, *s, '" + strings.Repeat("y", 60<<10) + "']\n"
	if _, _, err := ParseService("/run/service/x/service.yaml", []byte(ok), "x"); err != nil {
		t.Fatalf("a definition of 60 KiB with three aliases of a short string: %v", err)
	}
}
