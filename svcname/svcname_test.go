package svcname

import (
	"errors"
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
