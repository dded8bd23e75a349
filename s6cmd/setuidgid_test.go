package s6cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// s6-setuidgid switches uid, gid and groups, keeps the environment, and
// exits as s6's does when it cannot: 1 unknown user, 127 no such program,
// 126 not executable.
func TestSetuidgid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	bin := buildCommands(t)
	noexec := filepath.Join(bin, "noexec")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"nobody", "sh", "-c", `echo "$(id -u) $(id -g) $(id -G) $KEEP"`}, 0, "65534 65534 65534 kept\n"},
		{[]string{"no-such-user-x", "true"}, 1, ""},
		{[]string{"nobody", "/no/such/prog"}, 127, ""},
		{[]string{"nobody", "no-such-prog-x"}, 127, ""},
		{[]string{"root", noexec}, 126, ""},
		{[]string{"nobody"}, 100, ""},
	}
	for _, tc := range tests {
		cmd := exec.Command(filepath.Join(bin, "s6-setuidgid"), tc.args...)
		cmd.Env = append(os.Environ(), "KEEP=kept")
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || out.String() != tc.out {
			t.Errorf("s6-setuidgid %q: exit %d, out %q (stderr %q); want %d, %q", tc.args, code, out.String(), stderr.String(), tc.code, tc.out)
		}
	}
	// Root's groups beyond its account's (docker run --group-add 4242, as
	// a boot hook or a root service inherits them from hinit) reach the
	// account, as they do when hinit starts it. They did not before: the
	// hook's steps as hermes ran without them.
	cmd := exec.Command(filepath.Join(bin, "s6-setuidgid"), "nobody", "id", "-G")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{0, 4242}}}
	if out, err := cmd.Output(); err != nil || string(out) != "65534 4242\n" {
		t.Errorf("s6-setuidgid nobody id -G, started with groups 0 4242: %q, %v; want \"65534 4242\"", out, err)
	}
	// To root, the program is looked up in the dirs of PATH only root can
	// change (launch's RootsPATH); to another user, in the whole PATH.
	userBin, rootBin := filepath.Join(bin, "user"), filepath.Join(bin, "root")
	for dir, who := range map[string]string{userBin: "planted", rootBin: "roots"} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "who"), []byte("#!/bin/sh\necho "+who+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(userBin, 10000, 10000); err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string]string{"root": "roots\n", "nobody": "planted\n"} {
		cmd := exec.Command(filepath.Join(bin, "s6-setuidgid"), user, "who")
		cmd.Env = []string{"PATH=" + userBin + ":" + rootBin + ":/usr/bin:/bin"}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil || string(out) != want {
			t.Errorf("s6-setuidgid %s who: %q %v (stderr %q), want %q", user, out, err, stderr.String(), want)
		}
	}
}
