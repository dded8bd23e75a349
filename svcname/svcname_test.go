package svcname

import (
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
		{strings.Repeat("a", 251), true, true},
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
