package config

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name           string
		valid, profile bool
	}{
		{"gateway-coder", true, true},
		{"a", true, true},
		{"0", true, true},
		{"web.v2", true, false},
		{"my_profile", true, true},
		{strings.Repeat("a", 251), true, true},
		{strings.Repeat("a", 252), false, false},
		{"", false, false},
		{".", false, false},
		{"..", false, false},
		{".hidden", false, false},
		{"-x", false, false},
		{"_x", false, false},
		{"Web", false, false},
		{"a/b", false, false},
		{"a b", false, false},
		{"é", false, false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.name); got != tt.valid {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.valid)
		}
		if got := ValidProfile(tt.name); got != tt.profile {
			t.Errorf("ValidProfile(%q) = %v, want %v", tt.name, got, tt.profile)
		}
	}
}

func TestSignalByName(t *testing.T) {
	tests := []struct {
		name string
		want syscall.Signal
	}{
		{"TERM", syscall.SIGTERM},
		{"SIGTERM", syscall.SIGTERM},
		{"term", syscall.SIGTERM},
		{"SIGKILL", syscall.SIGKILL},
		{"HUP", syscall.SIGHUP},
		{"USR1", syscall.SIGUSR1},
		{"WINCH", syscall.SIGWINCH},
	}
	for _, tt := range tests {
		if got, err := SignalByName(tt.name); err != nil || got != tt.want {
			t.Errorf("SignalByName(%q) = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "SIG", "FOO", "15", "SIGSIGTERM", " TERM"} {
		if _, err := SignalByName(bad); !errors.Is(err, ErrUnknownSignal) {
			t.Errorf("SignalByName(%q) error = %v, want ErrUnknownSignal", bad, err)
		}
	}
}
