package signame

import (
	"errors"
	"syscall"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want syscall.Signal
		ok   bool
	}{
		{"TERM", syscall.SIGTERM, true},
		{"SIGTERM", syscall.SIGTERM, true},
		{"term", syscall.SIGTERM, true},
		{"SIGHUP", syscall.SIGHUP, true},
		{"usr1", syscall.SIGUSR1, true},
		{"WINCH", syscall.SIGWINCH, true},
		{"9", syscall.SIGKILL, true},
		{"15", syscall.SIGTERM, true},
		{"40", syscall.Signal(40), true},
		// real-time, as kill -l and Text name them
		{"SIGRTMIN", 34, true},
		{"rtmin+6", 40, true},
		{"SIGRTMAX", 64, true},
		{"RTMAX-2", 62, true},
		{"SIGRTMIN+30", 64, true},
		{"SIGRTMIN+31", 0, false},
		{"SIGRTMAX+1", 0, false},
		{"RTMIN-1", 0, false},
		{"RTMIN+", 0, false},
		{"RTMIN+06", 0, false},
		{"RTMIN++6", 0, false},
		{"RTMIN 6", 0, false},
		{"0", 0, false},
		{"32", 0, false},
		{"65", 0, false},
		{"NOPE", 0, false},
		{"SIG", 0, false},
		{"SIGSIGTERM", 0, false},
		{" TERM", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v", tc.in, got, err)
		}
		if !tc.ok && !errors.Is(err, ErrUnknown) {
			t.Errorf("Parse(%q): error %v does not match ErrUnknown", tc.in, err)
		}
		if tc.ok {
			if back, err := Parse(Name(got)); err != nil || back != got {
				t.Errorf("Parse(Name(%v)) = %v, %v", got, back, err)
			}
		}
	}
	if Name(syscall.SIGTERM) != "TERM" || Name(syscall.Signal(40)) != "40" {
		t.Errorf("Name: %q %q", Name(syscall.SIGTERM), Name(syscall.Signal(40)))
	}
}

// 128+N both ways: a death by SIGKILL is 137, and 137 reads back as
// SIGKILL; 128 and 160 and above stand for no signal.
func TestExitStatus(t *testing.T) {
	if got := ExitStatus(syscall.SIGKILL); got != 137 {
		t.Errorf("ExitStatus(SIGKILL) = %d, want 137", got)
	}
	for status, want := range map[int]syscall.Signal{128: 0, 129: syscall.SIGHUP, 143: syscall.SIGTERM, 159: syscall.SIGSYS, 160: 0, 255: 0, 3: 0} {
		if got := OfStatus(status); got != want {
			t.Errorf("OfStatus(%d) = %d, want %d", status, got, want)
		}
	}
}

// Text names every signal in a message, a real-time one as kill -l does,
// where unix.SignalName has nothing: "killed by " was a whole status reason.
func TestText(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL",
		32: "SIG32", 34: "SIGRTMIN", 40: "SIGRTMIN+6", 64: "SIGRTMIN+30"} {
		if got := Text(sig); got != want {
			t.Errorf("Text(%d) = %q, want %q", int(sig), got, want)
		}
		// what a message names, hsvc signal takes (but the C library's own)
		if back, err := Parse(want); sig != 32 && (err != nil || back != sig) {
			t.Errorf("Parse(Text(%d)) = %d, %v", int(sig), back, err)
		}
	}
}
