package config

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
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

// Expand as it was written first (a scan for the closing "}" from each
// default, a result per level): the reference the one-pass Expand must
// agree with.
func expandByScan(s string, env map[string]string) string {
	if strings.IndexByte(s, '$') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
		case '{':
			if val, n, ok := braceByScan(s[i+2:], env); ok {
				b.WriteString(val)
				i += 2 + n
				continue
			}
			b.WriteString("${")
			i += 2
		default:
			b.WriteByte('$')
			i++
		}
	}
	return b.String()
}

func braceByScan(rest string, env map[string]string) (string, int, bool) {
	n := varNameLen(rest)
	if n == 0 || n == len(rest) {
		return "", 0, false
	}
	val, set := env[rest[:n]]
	if rest[n] == '}' {
		return val, n + 1, true
	}
	op := 0
	switch {
	case strings.HasPrefix(rest[n:], ":-"):
		op = 2
	case rest[n] == '-':
		op = 1
	default:
		return "", 0, false
	}
	word, depth, end := rest[n+op:], 0, -1
	for i := 0; i < len(word) && end < 0; i++ {
		switch {
		case word[i] == '$' && i+1 < len(word) && word[i+1] == '{':
			depth++
			i++
		case word[i] == '}' && depth == 0:
			end = i
		case word[i] == '}':
			depth--
		}
	}
	if end < 0 {
		return "", 0, false
	}
	if !set || op == 2 && val == "" {
		return expandByScan(word[:end], env), n + op + end + 1, true
	}
	return val, n + op + end + 1, true
}

// The one-pass Expand gives what the scan from each default gave, on
// 200,000 random strings of the characters that matter.
func TestExpandAsByScan(t *testing.T) {
	env := map[string]string{"A": "", "B": "b", "C": "${A-x}"}
	rng := rand.New(rand.NewPCG(1, 2))
	const chars = "${}-:ABCx$${{}}"
	for range 200000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		s := string(b)
		if got, want := Expand(s, env), expandByScan(s, env); got != want {
			t.Fatalf("Expand(%q) = %q, the scan gave %q", s, got, want)
		}
	}
}

// A scandir definition's 64 KiB string of nested defaults, or of unclosed
// "${", costs what its length does: nested ones cost 440 MiB at every
// start before (a result per level).
func TestExpandDeepDefaults(t *testing.T) {
	n := (64<<10 - 100) / 5
	nested := strings.Repeat("${Q-", n) + "x" + strings.Repeat("}", n)
	unclosed := strings.Repeat("${Q-", n) + "x"
	for _, tc := range []struct{ name, s, want string }{{"nested", nested, "x"}, {"unclosed", unclosed, unclosed}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got := Expand(tc.s, nil)
		runtime.ReadMemStats(&after)
		if got != tc.want {
			t.Errorf("%s: Expand gave %.40q..., want %.40q...", tc.name, got, tc.want)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 4<<20 {
			t.Errorf("%s: Expand of %d bytes allocated %d bytes", tc.name, len(tc.s), a)
		}
	}
}
