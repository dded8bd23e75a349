package s6cmd

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// errText capitalises the C library's message, as s6 prints it, and
// leaves hinit's own, which begin with a service's name. Before, a refused
// dir was "Gateway-u0: its scandir dir is not a service".
func TestErrText(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{syscall.EACCES, "Permission denied"},
		{fmt.Errorf("control: %w", syscall.ENOENT), "control: no such file or directory"},
		{errors.New("gateway-u0: its scandir dir is not a service"), "gateway-u0: its scandir dir is not a service"},
	} {
		if got := errText(tc.err); got != tc.want {
			t.Errorf("errText(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
