package docker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startWithConfig runs a detached container whose /etc/hinit/hinit.yaml is
// yaml: created, the file copied in, then started.
func startWithConfig(t *testing.T, yaml string, cmd ...string) *ctr {
	t.Helper()
	needEngine(t)
	n := name(t)
	removeAtEnd(t, n)
	must(t, append(append(append([]string{"create"}, baseOpts(t, n)...), image), cmd...)...)
	f := filepath.Join(t.TempDir(), "hinit.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, "cp", f, n+":/etc/hinit/hinit.yaml")
	must(t, "start", n)
	return &ctr{t: t, id: n}
}

// s6Dir builds an s6 service dir as user, the hermes way: under a dot
// name, renamed into /run/service. files maps a path inside the dir to its
// content; run, finish and log/run are made executable.
func (c *ctr) s6Dir(user, name string, files map[string]string) string {
	c.t.Helper()
	tmp, dir := "/run/service/."+name+".tmp", "/run/service/"+name
	script := "set -e; mkdir " + tmp + "\n"
	for p, content := range files {
		script += "mkdir -p $(dirname " + tmp + "/" + p + ")\nprintf '%s' '" + strings.ReplaceAll(content, "'", `'\''`) + "' >" + tmp + "/" + p + "\n"
		if strings.HasSuffix(p, "run") || strings.HasSuffix(p, "finish") {
			script += "chmod 755 " + tmp + "/" + p + "\n"
		}
	}
	c.sh(user, script+"mv "+tmp+" "+dir+"\n/command/s6-svscanctl -a /run/service")
	return dir
}

// TestS6Detection: with compat: s6-overlay (the image's hinit.yaml) hermes'
// probe sees s6-overlay; hinit and hsvc still say what they are. Without
// it, /proc/1/comm is hinit and /run/s6 does not exist.
func TestS6Detection(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "sleep", "infinity")
	c.booted()
	if comm := strings.TrimSpace(c.sh("hermes", "cat /proc/1/comm")); comm != "s6-svscan" {
		t.Errorf("/proc/1/comm %q, want s6-svscan", comm)
	}
	c.sh("hermes", "test -d /run/s6/basedir && test -d /run/s6/container_environment/ && test -x /command/s6-svc && test -x /init")
	if v := c.sh("hermes", "hinit --version; hsvc --version"); !strings.HasPrefix(v, "hinit ") || !strings.Contains(v, "\nhsvc ") {
		t.Errorf("versions %q, want hinit's and hsvc's own", v)
	}
	// Operators' s6-svc on a static service's old s6-rc path keeps working.
	if r := c.exec("hermes", "/command/s6-svc", "-wu", "-T", "20000", "-u", "/run/service/dashboard"); r.code != 0 {
		t.Errorf("s6-svc -wu -u /run/service/dashboard: exit %d: %s", r.code, r.stderr)
	}
	if up := strings.TrimSpace(c.exec("hermes", "s6-svstat", "-o", "up", "/run/service/dashboard").stdout); up != "true" {
		t.Errorf("s6-svstat -o up /run/service/dashboard: %q, want true", up)
	}
	off := startWithConfig(t, "user: hermes\n", "sleep", "infinity")
	off.booted()
	if comm := strings.TrimSpace(off.sh("hermes", "cat /proc/1/comm")); comm != "hinit" {
		t.Errorf("without compat: /proc/1/comm %q, want hinit", comm)
	}
	if off.exists("/run/s6") {
		t.Error("without compat: /run/s6 exists")
	}
}

// TestS6ServiceDirs: s6 dirs written by hermes (and one by root) run as
// the trust rule says, see what boot hooks added to the container
// environment through with-contenv, stay down after finish exits 125, and
// log through s6-log with rotation; another user cannot control them.
func TestS6ServiceDirs(t *testing.T) {
	t.Parallel()
	c := startWithConfig(t, `user: hermes
compat: s6-overlay
boot:
  - name: addvar
    command: [sh, -c, "printf hooked >/run/s6/container_environment/HOOKVAR"]
`, "sleep", "infinity")
	c.booted()

	c.s6Dir("hermes", "env", map[string]string{"run": "#!/command/with-contenv sh\necho \"HOOKVAR=$HOOKVAR uid=$(id -u)\"\nexec sleep 1000\n"})
	c.s6Dir("hermes", "idh", map[string]string{"run": "#!/bin/sh\nid -u\nexec sleep 1000\n"})
	c.s6Dir("root", "idr", map[string]string{"run": "#!/bin/sh\nexec s6-setuidgid hermes id -u\n",
		"finish": "#!/bin/sh\nexit 125\n"})
	waitFor(t, "the run scripts' lines in docker logs", 20*time.Second, func() bool {
		l := c.logs()
		return strings.Contains(l, "[env] HOOKVAR=hooked uid=10000") && strings.Contains(l, "[idh] 10000") &&
			strings.Contains(l, "[idr] 10000")
	})

	// finish 125 after exit 78: down, and not restarted.
	dir := c.s6Dir("hermes", "fatal", map[string]string{"run": "#!/bin/sh\nexit 78\n",
		"finish": "#!/bin/sh\nif [ \"$1\" = 78 ]; then exit 125; fi\nexit 0\n"})
	waitFor(t, "fatal to be down for good", 20*time.Second, func() bool {
		return strings.TrimSpace(c.exec("hermes", "s6-svstat", "-o", "up,wantedup,exitcode", dir).stdout) == "false false 78"
	})
	if s, _ := c.status("fatal"); s.Restarts != 0 || s.State != "exited" {
		t.Errorf("fatal: %+v, want exited without restarts", s)
	}

	// log/run with hermes' s6-log script rotates at 1 MB keeping 10.
	c.s6Dir("hermes", "chatty", map[string]string{
		"run":     "#!/bin/sh\ni=0\nwhile [ $i -lt 25000 ]; do echo \"line $i 0123456789012345678901234567890123456789012345678901234567890123456789\"; i=$((i+1)); done\nsleep 1\necho chatty done\nexec sleep 1000\n",
		"log/run": "#!/bin/sh\nexec s6-log 1 n10 s1000000 T /opt/data/logs/chatty\n",
	})
	waitFor(t, "chatty's last line in its log", 30*time.Second, func() bool {
		return c.exec("hermes", "grep", "-q", "line 24999 ", "/opt/data/logs/chatty/current").code == 0
	})
	ls := c.sh("hermes", "cd /opt/data/logs/chatty && for f in *; do echo \"$f $(wc -c <$f)\"; done")
	archives := 0
	for _, l := range strings.Split(strings.TrimSpace(ls), "\n") {
		f := strings.Fields(l)
		if strings.HasPrefix(f[0], "@") {
			archives++
		}
		if n, _ := strconv.Atoi(f[1]); n > 1000000 {
			t.Errorf("%s is over 1 MB", l)
		}
	}
	if archives < 2 || archives > 10 {
		t.Errorf("%d archives, want rotation at 1 MB keeping at most 10:\n%s", archives, ls)
	}
	// Each line also reaches docker logs (s6-log's 1). The burst waits for
	// the console while it moves, but a console stalled for a second loses
	// lines (counted and said), so the line that counts is the one written
	// after the burst.
	waitFor(t, "chatty's lines in docker logs through s6-log's 1", 30*time.Second, func() bool {
		return strings.Contains(c.logs(), "[chatty/log] chatty done")
	})

	// Another user may not control a service.
	r := c.exec("65534", "/command/s6-svc", "-d", "/run/service/idh")
	if want := "s6-svc: fatal: unable to control /run/service/idh: Permission denied\n"; r.code != 111 || r.stderr != want {
		t.Errorf("s6-svc -d as 65534: exit %d, stderr %q; want 111 and %q", r.code, r.stderr, want)
	}
	if s, _ := c.status("idh"); !up(s) {
		t.Errorf("idh %+v after a refused s6-svc -d, want up", s)
	}
}
