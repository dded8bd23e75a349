package config

import (
	"reflect"
	"testing"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"HOME": "/opt/data", "EMPTY": "", "PORT": "9119", "A_1": "x"}
	tests := []struct {
		name, in, want string
	}{
		{"no variables", "plain text", "plain text"},
		{"set", "${HOME}/logs", "/opt/data/logs"},
		{"unset", "[${NOPE}]", "[]"},
		{"digits and underscore", "${A_1}", "x"},
		{"default when unset", "${NOPE:-9119}", "9119"},
		{"default when empty", "${EMPTY:-d}", "d"},
		{"no default when set", "${PORT:-1}", "9119"},
		{"empty default", "${NOPE:-}", ""},
		{"dash only when unset", "${EMPTY-d}|${NOPE-d}", "|d"},
		{"nested default", "${NOPE:-${HOME}/x}", "/opt/data/x"},
		{"nested unset default", "${NOPE:-${ALSO:-deep}}", "deep"},
		{"default with spaces", "${NOPE:-a b c}", "a b c"},
		{"dollar dollar", "$${HOME} costs $$5", "${HOME} costs $5"},
		{"bare $VAR kept", "echo $HOME", "echo $HOME"},
		{"trailing dollar", "a$", "a$"},
		{"unterminated", "${HOME", "${HOME"},
		{"unterminated default", "${NOPE:-x", "${NOPE:-x"},
		{"other operators kept", "${HOME:+x}", "${HOME:+x}"},
		{"bad name kept", "${1} ${} ${-x}", "${1} ${} ${-x}"},
		{"several", "${HOME}:${PORT}", "/opt/data:9119"},
		{"value not re-expanded", "${LOOP}", "${HOME}"},
	}
	env["LOOP"] = "${HOME}"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Expand(tt.in, env); got != tt.want {
				t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTruthy(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"1", true}, {"true", true}, {"TRUE", true}, {"Yes", true}, {" yes\n", true}, {"on", true}, {"ON", true},
		{"", false}, {"0", false}, {"false", false}, {"no", false}, {"Off", false}, {"y", false}, {"2", false}, {"enable", false},
	}
	for _, tt := range tests {
		if got := Truthy(tt.in); got != tt.want {
			t.Errorf("Truthy(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for in, want := range map[string]bool{"": true, " 0 ": true, "FALSE": true, "no": true, "off": true, "on": false, "y": false, "enable": false} {
		if got := Falsy(in); got != want {
			t.Errorf("Falsy(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestExpanded(t *testing.T) {
	s, _, err := ParseService("service.yaml", []byte(specService), "dashboard")
	if err != nil {
		t.Fatal(err)
	}
	s.Stop.PlannedStopMarker = "${HERMES_HOME}/m"
	s.Ready = Ready{TCP: "127.0.0.1:${HERMES_DASHBOARD_PORT:-9119}"}
	s.User = "${U:-hermes}"
	s.Workdir = "${HERMES_HOME}"
	s.Env["X"] = "${HERMES_HOME}"
	env := map[string]string{"HERMES_HOME": "/opt/data", "HERMES_DASHBOARD": "1"}

	got := s.Expanded(env)
	want := []string{got.Command[3], got.User, got.Workdir, got.Env["X"], got.Enabled, got.Log.Dir, got.Stop.PlannedStopMarker, got.Ready.TCP}
	if exp := []string{"9119", "hermes", "/opt/data", "/opt/data", "1", "/opt/data/logs/gateways/coder", "/opt/data/m", "127.0.0.1:9119"}; !reflect.DeepEqual(want, exp) {
		t.Errorf("expanded = %q, want %q", want, exp)
	}
	if s.Command[3] != "${HERMES_DASHBOARD_PORT:-9119}" || s.Env["X"] != "${HERMES_HOME}" || s.Log.Dir[0] != '$' {
		t.Error("Expanded changed the original")
	}
	*got.Log.Console = false
	if !s.Log.ConsoleOn() {
		t.Error("Expanded shares log.console with the original")
	}
}

func TestIsEnabled(t *testing.T) {
	tests := []struct {
		name, enabled string
		env           map[string]string
		want          bool
	}{
		{"absent", "", nil, true},
		{"literal true", "true", nil, true},
		{"literal false", "false", nil, false},
		{"variable set truthy", "${HERMES_DASHBOARD}", map[string]string{"HERMES_DASHBOARD": "Yes"}, true},
		{"variable set falsy", "${HERMES_DASHBOARD}", map[string]string{"HERMES_DASHBOARD": "0"}, false},
		{"variable unset", "${HERMES_DASHBOARD}", nil, false},
		{"variable empty", "${HERMES_DASHBOARD}", map[string]string{"HERMES_DASHBOARD": ""}, false},
		{"default", "${HERMES_DASHBOARD:-1}", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Service{Enabled: tt.enabled}
			if got := s.Expanded(tt.env).IsEnabled(); got != tt.want {
				t.Errorf("IsEnabled = %v, want %v", got, tt.want)
			}
		})
	}
}
