package docker

import (
	"strings"
	"testing"
	"time"
)

// TestInvocations runs the ways users start the image (SPEC §1, §2) to
// their end: the container's exit status is main's, and main is what the
// routing of docker/hinit.yaml makes of the CMD.
func TestInvocations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		opts       []string
		cmd        []string
		wantCode   int
		wantStdout string // exact
		wantStderr string // a substring
	}{
		{"chat -q is wrapped in hermes", nil, []string{"chat", "-q", "hi"}, 0, "hermes: you said hi\n", "main started"},
		{"bash -c runs as given, as hermes", nil, []string{"bash", "-c", `echo "$0 $(id -u):$(id -g) $HOME"; exit 3`}, 3, "bash 10000:10000 /opt/data\n", ""},
		{"sh -c exit 42", nil, []string{"sh", "-c", "exit 42"}, 42, "", "main exited pid="},
		{"a program named like a hermes subcommand still reaches hermes", nil, []string{"login"}, 0, "usage: hermes login (fake: nothing to do)\n", ""},
		{"after --, an option goes to hermes", nil, []string{"--", "--version"}, 0, "hermes 0.0.0-fake (hinit test image)\n", ""},
		{"as PID 1, an option without -- goes to hermes too", nil, []string{"--version"}, 0, "hermes 0.0.0-fake (hinit test image)\n", ""},
		{"a missing program is 127", nil, []string{"/no/such/program"}, 127, "", "/no/such/program"},
		{"killed by a signal is 128+N", nil, []string{"sh", "-c", "kill -USR1 $$"}, 138, "", ""},
		{"tini -g -- entrypoint still works", []string{"--entrypoint", "/usr/bin/tini"}, []string{"-g", "--", "sh", "-c", "exit 5"}, 5, "", ""},
		{"tini -s -g -- with hermes", []string{"--entrypoint", "/usr/bin/tini"}, []string{"-s", "-g", "--", "chat", "-q", "old"}, 0, "hermes: you said old\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runOnce(t, tt.opts, tt.cmd...)
			if r.code != tt.wantCode {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			if tt.wantStdout != "" && r.stdout != tt.wantStdout {
				t.Errorf("stdout %q, want %q", r.stdout, tt.wantStdout)
			}
			if !strings.Contains(r.stderr, tt.wantStderr) {
				t.Errorf("stderr does not contain %q:\n%s", tt.wantStderr, r.stderr)
			}
		})
	}
}

// TestNoArgsAndSleep: without a CMD main is hermes (the banner, running as
// hermes in /opt/data); `sleep infinity` runs as given; both end with the
// status of SIGTERM when docker stop arrives.
func TestNoArgsAndSleep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cmd  []string
		want string // in ps output of main (pid from hsvc-less ps)
	}{
		{"no CMD is hermes", nil, "hermes"},
		{"sleep infinity", []string{"sleep", "infinity"}, "sleep infinity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := start(t, nil, tt.cmd...)
			c.booted()
			waitFor(t, "main started in docker logs", 10*time.Second, func() bool {
				return strings.Contains(c.logs(), "hinit: main started")
			})
			ps := c.sh("root", "ps -o user,args")
			if !psHas(ps, "hermes", tt.want) {
				t.Errorf("no %q running as hermes:\n%s", tt.want, ps)
			}
			if tt.cmd == nil {
				waitFor(t, "the banner", 10*time.Second, func() bool {
					return strings.Contains(c.logs(), "Hermes Agent (fake) ready: pid=")
				})
				if l := c.logs(); !strings.Contains(l, "uid=10000 gid=10000 home=/opt/data") {
					t.Errorf("banner does not say hermes in /opt/data:\n%s", l)
				}
			}
			must(t, "stop", c.id)
			if code := c.inspect("{{.State.ExitCode}}"); code != "143" {
				t.Errorf("exit status after docker stop %s, want 143", code)
			}
		})
	}
}

// psHas reports whether a line of ps -o user,args shows cmd run by user.
func psHas(ps, user, cmd string) bool {
	for _, l := range strings.Split(ps, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == user && strings.HasPrefix(strings.Join(f[1:], " "), cmd) {
			return true
		}
	}
	return false
}

// TestDockerInit: under docker run --init hinit is not PID 1; it says so,
// becomes a subreaper, and still runs main, services and hsvc.
func TestDockerInit(t *testing.T) {
	t.Parallel()
	r := runOnce(t, []string{"--init"}, "sh", "-c", "exit 42")
	if r.code != 42 {
		t.Errorf("--init sh -c 'exit 42': exit %d, want 42\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "not PID 1") || !strings.Contains(r.stderr, "subreaper") {
		t.Errorf("hinit did not say it is not PID 1 and a subreaper:\n%s", r.stderr)
	}
	c := start(t, []string{"--init", "-e", "HERMES_DASHBOARD=1"}, "sleep", "infinity")
	c.booted()
	if comm := strings.TrimSpace(c.readFile("/proc/1/comm")); comm == "hinit" {
		t.Errorf("PID 1 is hinit under --init")
	}
	c.waitState("dashboard", "up", 20*time.Second, up)
	c.hermes("profile", "create", "initprof")
	c.hermes("-p", "initprof", "gateway", "start")
	c.waitState("gateway-initprof", "up", 20*time.Second, up)
}

// TestWithContenv: with-contenv, in a docker exec, gives a command the
// environment the container booted with, over the exec's own.
func TestWithContenv(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"-e", "FOO=boot"}, "sleep", "infinity")
	c.booted()
	for _, argv := range [][]string{
		{"with-contenv", "sh", "-c", `echo "$FOO $HERMES_HOME"`},
		{"env", "-i", "/usr/local/bin/hinit", "with-contenv", "/bin/sh", "-c", `echo "$FOO $HERMES_HOME"`},
	} {
		r := dockerCmd(t, append([]string{"exec", "-u", "hermes", "-e", "FOO=exec", c.id}, argv...)...)
		if r.code != 0 || r.stdout != "boot /opt/data\n" {
			t.Errorf("%q: exit %d, stdout %q, want 0 and %q\n%s", argv, r.code, r.stdout, "boot /opt/data\n", r.stderr)
		}
	}
}

// TestUserCannotWriteVolume: docker run --user with a uid that cannot write
// the volume runs (stage2 refused it with exit 1), and the boot hook says
// once why hermes will fail to keep its state and what to use instead:
// HERMES_UID/PUID with a root start, as stage2's refusal did. --user of the
// uid that owns the volume says nothing.
func TestUserCannotWriteVolume(t *testing.T) {
	t.Parallel()
	want := "[hermes-setup] warning: started with --user 1000:1000, which cannot write /opt/data (owned by 10000:10000): " +
		"hermes cannot keep its state; to have the volume's files owned by your uid, start as root (no --user) with " +
		"-e HERMES_UID=1000 -e HERMES_GID=1000 (or PUID/PGID), or give the volume to 1000\n"
	r := runOnce(t, []string{"--user", "1000:1000"}, "true")
	if r.code != 0 || strings.Count(r.stderr, want) != 1 {
		t.Errorf("exit %d, want 0 and once %q in:\n%s", r.code, want, r.stderr)
	}
	// With HERMES_UID set already, what it lacks is the root start.
	want = "[hermes-setup] warning: started with --user 1000:1000, which cannot write /opt/data (owned by 10000:10000): " +
		"hermes cannot keep its state; drop --user (start as root), and your HERMES_UID/PUID 1000 applies\n"
	r = runOnce(t, []string{"--user", "1000:1000", "-e", "HERMES_UID=1000"}, "true")
	if r.code != 0 || strings.Count(r.stderr, want) != 1 {
		t.Errorf("with HERMES_UID=1000: exit %d, want 0 and once %q in:\n%s", r.code, want, r.stderr)
	}
	r = runOnce(t, []string{"--user", "10000:10000"}, "true")
	if r.code != 0 || strings.Contains(r.stderr, "cannot write") {
		t.Errorf("--user 10000:10000: exit %d, want 0 and no warning:\n%s", r.code, r.stderr)
	}
}
