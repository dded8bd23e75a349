package config

import (
	"errors"
	"syscall"
	"testing"
)

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
