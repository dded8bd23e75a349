package svcname

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	tests := []struct {
		name             string
		service, profile bool
	}{
		{"gateway-coder", true, true},
		{"a", true, true},
		{"0day", true, true},
		{"web.v2", true, false},
		{"snake_case", true, true},
		{"", false, false},
		{".hidden", false, false},
		{"-dash", false, false},
		{"Upper", false, false},
		{"sp ace", false, false},
		{"a/b", false, false},
		{"..", false, false},
		{strings.Repeat("a", 64), true, true},
		{strings.Repeat("a", 65), true, false},
		{strings.Repeat("a", 251), true, false},
		{strings.Repeat("a", 252), false, false},
	}
	for _, tt := range tests {
		if got := Valid(tt.name); got != tt.service {
			t.Errorf("Valid(%q) = %v, want %v", tt.name, got, tt.service)
		}
		if got := ValidProfile(tt.name); got != tt.profile {
			t.Errorf("ValidProfile(%q) = %v, want %v", tt.name, got, tt.profile)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		template, instance string
		want               string // "" = valid
	}{
		{"gateway", "coder", ""},
		{"gateway", "a.b", `"a.b" is not a valid instance name (expected ^[a-z0-9][a-z0-9_-]*$ (no dot), at most 64 bytes)`},
		{"Gateway", "coder", `"Gateway" is not a valid template name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`},
		{strings.Repeat("t", 200), strings.Repeat("i", 60), `"` + strings.Repeat("t", 64) +
			`..." is not a valid service name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`},
	}
	for _, tt := range tests {
		err := CheckInstance(tt.template, tt.instance)
		if tt.want == "" {
			if err != nil {
				t.Errorf("CheckInstance(%q, %q) = %v", tt.template, tt.instance, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckInstance(%q, %q) = %v\nwant %s", tt.template, tt.instance, err, tt.want)
		}
	}
}

// An environment variable name is whatever execve and a file of the
// environment dir can carry: not empty, no "=", no NUL; the config, the
// control protocol and the reconcile's slots all ask CheckEnv.
func TestCheckEnv(t *testing.T) {
	for name, want := range map[string]string{
		"OPENAI_API_KEY": "",
		"lower.dotted-1": "",
		"":               `"" is not a valid environment variable name (expected not empty, no "=", no NUL)`,
		"A=B":            `"A=B" is not a valid environment variable name (expected not empty, no "=", no NUL)`,
		"A\x00":          `"A\x00" is not a valid environment variable name (expected not empty, no "=", no NUL)`,
	} {
		err := CheckEnv(name)
		if want == "" {
			if err != nil || !ValidEnv(name) {
				t.Errorf("CheckEnv(%q) = %v, ValidEnv %v", name, err, ValidEnv(name))
			}
			continue
		}
		if err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) || ValidEnv(name) {
			t.Errorf("CheckEnv(%q) = %v, ValidEnv %v\nwant %s", name, err, ValidEnv(name), want)
		}
	}
}

func TestCheckEnvVar(t *testing.T) {
	for v, want := range map[string]string{
		"":          "",
		"a b=c é":   "",
		"a\x00b":    `environment variable "K": its value holds a NUL byte`,
		"\xff\xfe":  `environment variable "K": its value is not valid UTF-8`,
		"ok\n\tnew": "",
	} {
		err := CheckEnvVar("K", v)
		if got := fmt.Sprint(err); want == "" && err != nil || want != "" && got != want {
			t.Errorf("CheckEnvVar(K, %q) = %v, want %q", v, err, want)
		}
	}
	if bad := CheckEnvVar("K\xff", "v"); bad == nil || bad.Error() != `environment variable "K\xff": its name is not valid UTF-8` {
		t.Errorf("a name not UTF-8: %v", bad)
	}
	if bad := CheckEnvVar("A=B", "v"); !errors.Is(bad, ErrInvalid) {
		t.Errorf("a name with \"=\": %v, want the name rule's error", bad)
	}
}
