package config

import (
	"reflect"
	"testing"
	"time"
)

// specService is the service example of SPEC §3, verbatim.
const specService = `command: [hermes, dashboard, --port, "${HERMES_DASHBOARD_PORT:-9119}"]  # required; ${VAR} and ${VAR:-default} expand from the container env at each start
user: hermes            # name or uid:gid; HOME, USER, LOGNAME and supplementary groups set to match
workdir: /opt/data
env: {HERMES_SUPERVISED_CHILD: "1"}
enabled: "${HERMES_DASHBOARD}"   # optional; falsy → registered but down
restart: always         # always | on-failure | never
no_restart_exit_codes: [0, 78]   # these exits leave the service down (state "exited"), never restarted
backoff: {initial: 500ms, max: 60s, reset_after: 10s}   # after a run of at least reset_after: restart at once;
                        # each consecutive quick failure waits initial, then double, up to max
give_up: {restarts: 10, within: 5m}   # then state "failed": down until someone starts it; the reason is kept
stop: {signal: TERM, timeout: 10s}    # then SIGKILL to the process group
ready: {notify_fd: 3}   # or {tcp: "127.0.0.1:9119"} or {delay: 2s}; without it a service is ready when spawned
log: {dir: "${HERMES_HOME}/logs/gateways/coder", max_size: 1MiB, keep: 10, console: true}
essential: false        # true: when it fails, the container shuts down with its exit code
`

// specTemplates is the templates/reconcile example of SPEC §3, verbatim.
const specTemplates = `templates:
  gateway:
    command: [hermes, -p, "{instance}", gateway, run, --replace]
    overrides:
      default:
        command: [hermes, gateway, run, --replace]
        stop: {signal: TERM, timeout: 10s, planned_stop_marker: "${HERMES_HOME}/.gateway-planned-stop.json"}
    user: hermes
    restart: always
    no_restart_exit_codes: [0, 78]
    log: {dir: "${HERMES_HOME}/logs/gateways/{instance}", console: true}
    stop: {signal: TERM, timeout: 10s, planned_stop_marker: "${HERMES_HOME}/profiles/{instance}/.gateway-planned-stop.json"}
reconcile: {home: "${HERMES_HOME:-/opt/data}", template: gateway}   # absent: no boot reconciliation
`

func yes() *bool { on := true; return &on }

// wantSpecService is specService decoded, for a service named dashboard.
func wantSpecService(source Source, file string, line int) *Service {
	return &Service{
		Name: "dashboard", Source: source, File: file, Line: line,
		Command:            []string{"hermes", "dashboard", "--port", "${HERMES_DASHBOARD_PORT:-9119}"},
		User:               "hermes",
		Workdir:            "/opt/data",
		Env:                map[string]string{"HERMES_SUPERVISED_CHILD": "1"},
		Enabled:            "${HERMES_DASHBOARD}",
		Restart:            RestartAlways,
		NoRestartExitCodes: []int{0, 78},
		Backoff:            Backoff{Initial: 500 * time.Millisecond, Max: 60 * time.Second, ResetAfter: 10 * time.Second},
		GiveUp:             GiveUp{Restarts: 10, Within: 5 * time.Minute},
		Stop:               Stop{Signal: "TERM", Timeout: 10 * time.Second},
		Ready:              Ready{NotifyFD: 3},
		Log:                Log{Dir: "${HERMES_HOME}/logs/gateways/coder", MaxSize: 1 << 20, Keep: 10, Console: yes()},
	}
}

func TestSpecServiceDynamic(t *testing.T) {
	s, ref, err := ParseService("/run/service/dashboard/service.yaml", []byte(specService), "dashboard")
	if err != nil || ref != nil {
		t.Fatalf("ParseService = %v, %v", ref, err)
	}
	want := wantSpecService("scandir", "/run/service/dashboard/service.yaml", 1)
	if !reflect.DeepEqual(s, want) {
		t.Errorf("service:\n got %+v\nwant %+v", s, want)
	}
}

func TestSpecServiceStatic(t *testing.T) {
	data := "services:\n  dashboard:\n" + indent(specService, "    ")
	c, err := Parse("hinit.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := wantSpecService("static", "hinit.yaml", 2)
	if len(c.Services) != 1 || !reflect.DeepEqual(c.Services[0], want) {
		t.Errorf("services:\n got %+v\nwant %+v", c.Services, want)
	}
}

func TestSpecTemplates(t *testing.T) {
	c, err := Parse("hinit.yaml", []byte(specTemplates))
	if err != nil {
		t.Fatal(err)
	}
	if want := (&Reconcile{Home: "${HERMES_HOME:-/opt/data}", Template: "gateway"}); !reflect.DeepEqual(c.Reconcile, want) {
		t.Errorf("reconcile = %+v, want %+v", c.Reconcile, want)
	}
	tm := c.Templates["gateway"]
	if tm == nil || tm.Name != "gateway" || tm.File != "hinit.yaml" || tm.Line != 2 {
		t.Fatalf("template = %+v", tm)
	}
	gateway := func(instance string, command []string, marker string) *Service {
		return &Service{
			Name: "gateway-" + instance, Source: "template:gateway", File: "hinit.yaml", Line: 2,
			Command:            command,
			User:               "hermes",
			Restart:            RestartAlways,
			NoRestartExitCodes: []int{0, 78},
			Backoff:            defaultBackoff,
			Stop:               Stop{Signal: "TERM", Timeout: 10 * time.Second, PlannedStopMarker: marker},
			Log:                Log{Dir: "${HERMES_HOME}/logs/gateways/" + instance, MaxSize: 1 << 20, Keep: 10, Console: yes()},
		}
	}
	tests := []struct {
		name string
		ref  Ref
		want *Service
	}{
		{
			name: "instance",
			ref:  Ref{Template: "gateway", Instance: "coder"},
			want: gateway("coder", []string{"hermes", "-p", "coder", "gateway", "run", "--replace"},
				"${HERMES_HOME}/profiles/coder/.gateway-planned-stop.json"),
		},
		{
			name: "instance with overrides",
			ref:  Ref{Template: "gateway", Instance: "default"},
			want: gateway("default", []string{"hermes", "gateway", "run", "--replace"},
				"${HERMES_HOME}/.gateway-planned-stop.json"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Render(tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Render:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	out := []byte{}
	start := true
	for i := 0; i < len(s); i++ {
		if start && s[i] != '\n' {
			out = append(out, prefix...)
		}
		out = append(out, s[i])
		start = s[i] == '\n'
	}
	return string(out)
}
