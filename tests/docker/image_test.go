package docker

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// An image built from a checkout made under umask 002, where every file of
// the build context is group-writable, boots (hinit refuses a root-owned
// hinit.yaml its group may write), and what it runs has the modes the
// Dockerfile gives it, whatever the context's were.
func TestImageFromGroupWritableCheckout(t *testing.T) {
	needEngine(t)
	base := envOr("HINIT_TEST_BASE", "hinit-test-base:latest")
	if r := dockerCmd(t, "image", "inspect", "--format", "{{.Id}}", base); r.code != 0 {
		t.Skipf("no base image %s to build on (HINIT_TEST_NO_BUILD=1 with an image built elsewhere?): %s", base, r.stderr)
	}
	dir := t.TempDir()
	files := map[string]os.FileMode{
		"Dockerfile":             0o664,
		".dockerignore":          0o664,
		"docker/hinit.yaml":      0o664,
		"docker/hermes-setup.sh": 0o775,
		"dist/linux-amd64/hinit": 0o775,
		"dist/linux-amd64/hsvc":  0o775,
		"dist/linux-arm64/hinit": 0o775,
		"dist/linux-arm64/hsvc":  0o775,
	}
	for rel, mode := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", rel))
		if err != nil {
			t.Fatalf("%v (the binaries come from make cross, which build-test-image runs)", err)
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o775); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dst, mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	tag := name(t) + ":umask002"
	r := dockerCmd(t, "build", "--force-rm", "--label", runLabel, "--build-arg", "BASE_IMAGE="+base, "-t", tag, dir)
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", tag).Run() })
	if r.code != 0 {
		t.Fatalf("docker build: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	n := name(t)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", "-v", n).Run() })
	r = dockerCmd(t, append(append([]string{"run", "--rm"}, baseOpts(t, n)...), tag,
		"stat", "-c", "%a %U:%G %n", "/etc/hinit/hinit.yaml", "/etc/hinit/hermes-setup.sh",
		"/usr/local/bin/hinit", "/usr/local/bin/hsvc")...)
	want := "644 root:root /etc/hinit/hinit.yaml\n" +
		"755 root:root /etc/hinit/hermes-setup.sh\n" +
		"755 root:root /usr/local/bin/hinit\n" +
		"755 root:root /usr/local/bin/hsvc\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("docker run: exit %d, stdout:\n%s\nwant exit 0 and:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}
