package testprog

import (
	"os"
	"path/filepath"
	"testing"
)

// PathDirs makes two PATH dirs in a new temp dir, as the hermes image has
// them: user, owned by uid 10000 (a dir of the hermes user's volume), and
// root, root's. scripts maps a path relative to the temp dir
// ("user/setup") to what the shell script written there prints, with the
// PATH it runs with. Needs root; the test is skipped otherwise.
func PathDirs(t *testing.T, scripts map[string]string) (userBin, rootBin string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a dir to another user")
	}
	base := t.TempDir()
	userBin, rootBin = filepath.Join(base, "user"), filepath.Join(base, "root")
	for _, d := range []string{userBin, rootBin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(userBin, 10000, 10000); err != nil {
		t.Fatal(err)
	}
	for rel, says := range scripts {
		if err := os.WriteFile(filepath.Join(base, rel), []byte("#!/bin/sh\necho \""+says+" PATH=$PATH\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return userBin, rootBin
}
