package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// result is how one docker command ended.
type result struct {
	stdout, stderr string
	code           int
}

// dockerCmd runs docker with args (at most 90s) and returns how it ended;
// only a docker CLI that cannot run at all fails the test.
func dockerCmd(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("docker %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// must runs docker and fails the test unless it exits 0.
func must(t *testing.T, args ...string) string {
	t.Helper()
	r := dockerCmd(t, args...)
	if r.code != 0 {
		t.Fatalf("docker %s: exit %d: %s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// needEngine skips the test, loudly, when no Docker engine answers.
func needEngine(t *testing.T) {
	t.Helper()
	if noEngine != "" {
		t.Skip("SKIPPED: " + noEngine)
	}
}

// name is a fresh container or volume name for t.
func name(t *testing.T) string {
	b := make([]byte, 4)
	rand.Read(b)
	n := strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-"))
	if len(n) > 40 {
		n = n[:40]
	}
	return "hinit-test-" + n + "-" + hex.EncodeToString(b)
}

// baseOpts are the options of every container: no network, this run's
// label, a name.
func baseOpts(t *testing.T, n string) []string {
	// --pull never: nothing here may ever reach a registry, even when the
	// test image is missing.
	return []string{"--pull", "never", "--network", "none", "--label", runLabel, "--name", n}
}

// runOnce runs a container to its end (docker run --rm) and returns how it
// ended: its exit status, stdout and stderr.
func runOnce(t *testing.T, opts []string, cmd ...string) result {
	t.Helper()
	needEngine(t)
	n := name(t)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", "-v", n).Run() })
	args := append(append([]string{"run", "--rm"}, baseOpts(t, n)...), opts...)
	return dockerCmd(t, append(append(args, image), cmd...)...)
}

// ctr is a detached container of one test.
type ctr struct {
	t  *testing.T
	id string
}

// start runs a detached container and removes it (with its anonymous
// volumes) when the test ends.
func start(t *testing.T, opts []string, cmd ...string) *ctr {
	t.Helper()
	needEngine(t)
	n := name(t)
	removeAtEnd(t, n)
	args := append(append([]string{"run", "-d"}, baseOpts(t, n)...), opts...)
	must(t, append(append(args, image), cmd...)...)
	return &ctr{t: t, id: n}
}

// volume creates a named volume, removed when the test ends.
func volume(t *testing.T) string {
	t.Helper()
	n := name(t)
	must(t, "volume", "create", "--label", runLabel, n)
	t.Cleanup(func() { exec.Command("docker", "volume", "rm", "-f", n).Run() })
	return n
}

// exec runs a command in c as user ("" = the container's user).
func (c *ctr) exec(user string, cmd ...string) result {
	c.t.Helper()
	args := []string{"exec"}
	if user != "" {
		args = append(args, "-u", user)
	}
	return dockerCmd(c.t, append(append(args, c.id), cmd...)...)
}

// hermes runs `hermes ARGS` as the hermes user, as a user of the image does
// with docker exec -u hermes, and fails the test unless it exits 0.
func (c *ctr) hermes(args ...string) string {
	c.t.Helper()
	r := c.exec("hermes", append([]string{"hermes"}, args...)...)
	if r.code != 0 {
		c.t.Fatalf("hermes %s: exit %d: %s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// sh runs a shell command in c as user and fails the test unless it exits 0.
func (c *ctr) sh(user, script string) string {
	c.t.Helper()
	r := c.exec(user, "sh", "-c", script)
	if r.code != 0 {
		c.t.Fatalf("sh -c %q as %q: exit %d: %s%s", script, user, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// booted waits until hinit answers hsvc check.
func (c *ctr) booted() {
	c.t.Helper()
	waitFor(c.t, "hinit to answer hsvc check", 30*time.Second, func() bool {
		return c.exec("", "hsvc", "check").code == 0
	})
}

// logs is docker logs of c, stdout and stderr together.
func (c *ctr) logs() string {
	r := dockerCmd(c.t, "logs", c.id)
	return r.stdout + r.stderr
}

// inspect is one field of docker inspect.
func (c *ctr) inspect(format string) string {
	return strings.TrimSpace(must(c.t, "inspect", "--format", format, c.id))
}

// svc is one service of hsvc status --json.
type svc struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	Want     string `json:"want"`
	PID      int    `json:"pid"`
	Restarts int    `json:"restarts"`
	Reason   string `json:"reason"`
	LastExit *struct {
		Code      int    `json:"code"`
		Signal    string `json:"signal"`
		OOM       bool   `json:"oom"`
		PidsLimit bool   `json:"pids_limit"`
	} `json:"last_exit"`
}

// status is hsvc status --json NAME, as hermes; ok is false when there is
// no such service (hsvc exit 3).
func (c *ctr) status(name string) (s svc, ok bool) {
	c.t.Helper()
	r := c.exec("hermes", "hsvc", "status", "--json", name)
	if r.code == 3 {
		return svc{}, false
	}
	var out struct{ Services []svc }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || len(out.Services) != 1 {
		c.t.Fatalf("hsvc status --json %s: exit %d: %s%s", name, r.code, r.stdout, r.stderr)
	}
	return out.Services[0], true
}

// waitState waits until service name satisfies cond and returns it.
func (c *ctr) waitState(name, what string, timeout time.Duration, cond func(svc) bool) svc {
	c.t.Helper()
	var last svc
	waitFor(c.t, name+" "+what, timeout, func() bool {
		s, ok := c.status(name)
		last = s
		return ok && cond(s)
	})
	return last
}

// runningGateway starts a container whose main sleeps, creates profile and
// starts its gateway as hermes does, and returns both once the gateway is
// up.
func runningGateway(t *testing.T, profile string) (*ctr, svc) {
	t.Helper()
	c := start(t, nil, "sleep", "infinity")
	c.booted()
	c.hermes("profile", "create", profile)
	c.hermes("-p", profile, "gateway", "start")
	return c, c.waitState("gateway-"+profile, "up", 20*time.Second, up)
}

// up is a condition: the service runs and is ready.
func up(s svc) bool { return s.State == "up" && s.PID > 0 }

// readFile is a file of c, read as root.
func (c *ctr) readFile(path string) string {
	c.t.Helper()
	r := c.exec("root", "cat", path)
	if r.code != 0 {
		c.t.Fatalf("cat %s: exit %d: %s", path, r.code, r.stderr)
	}
	return r.stdout
}

// exists reports whether path exists in c.
func (c *ctr) exists(path string) bool {
	return c.exec("root", "test", "-e", path).code == 0
}

// gatewayState is a gateway_state.json of c, decoded.
func (c *ctr) gatewayState(path string) map[string]any {
	c.t.Helper()
	return decodeState(c.t, c.readFile(path))
}

func decodeState(t *testing.T, data string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("gateway_state.json %q: %v", data, err)
	}
	return m
}

// volumeFile reads a file of a named volume through a throwaway container
// that does not boot hinit.
func volumeFile(t *testing.T, vol, path string) string {
	t.Helper()
	n := name(t)
	return must(t, "run", "--rm", "--pull", "never", "--network", "none", "--label", runLabel, "--name", n,
		"-v", vol+":/opt/data", "--entrypoint", "/bin/cat", image, path)
}

// waitFor polls cond until it holds or timeout passes (then the test fails
// naming what it waited for).
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for delay := 20 * time.Millisecond; !cond(); delay = min(delay*2, 250*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(delay)
	}
}

// checkState compares the fields of a gateway_state.json that matter.
func checkState(t *testing.T, where string, got map[string]any, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %v, want %q (file: %v)", where, k, got[k], v, got)
		}
	}
}

// removeAtEnd removes container n (with its anonymous volumes) when t ends,
// after logging its last lines if t failed.
func removeAtEnd(t *testing.T, n string) {
	t.Cleanup(func() {
		if t.Failed() {
			logs := dockerCmd(t, "logs", "--tail", "60", n)
			t.Logf("docker logs of %s:\n%s%s", n, logs.stdout, logs.stderr)
		}
		exec.Command("docker", "rm", "-f", "-v", n).Run()
	})
}
