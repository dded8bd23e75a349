package docker

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBootHookRepairsOwnership: the first-boot hook (docker/hermes-setup.sh)
// seeds $HERMES_HOME as hermes, gives root-written files in the volume back
// to hermes at the next boot, and never follows a symlink planted in the
// volume.
func TestBootHookRepairsOwnership(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	c := start(t, []string{"-v", vol + ":/opt/data"}, "sleep", "infinity")
	c.booted()
	for _, d := range []string{"logs/gateways", "profiles", "skills", "platforms/pairing"} {
		if owner := strings.TrimSpace(c.sh("root", "stat -c %u:%g /opt/data/"+d)); owner != "10000:10000" {
			t.Errorf("seeded /opt/data/%s owned by %s, want 10000:10000", d, owner)
		}
	}
	c.sh("root", `mkdir -p /opt/data/profiles/rooty && echo soul >/opt/data/profiles/rooty/SOUL.md &&
		touch /opt/data/auth.json && rm -rf /opt/data/cron && ln -s /etc /opt/data/cron`)
	must(t, "restart", c.id)
	c.booted()
	for _, p := range []string{"/opt/data/profiles/rooty", "/opt/data/profiles/rooty/SOUL.md", "/opt/data/auth.json"} {
		if owner := strings.TrimSpace(c.sh("root", "stat -c %u:%g "+p)); owner != "10000:10000" {
			t.Errorf("%s owned by %s after the boot hook, want 10000:10000", p, owner)
		}
	}
	if owner := strings.TrimSpace(c.sh("root", "stat -c %u:%g /etc")); owner != "0:0" {
		t.Errorf("the hook followed the planted symlink: /etc is now %s", owner)
	}
	l := c.logs()
	if !strings.Contains(l, "[hermes-setup] warning: refusing to go through symlink /opt/data/cron") {
		t.Errorf("no warning about the planted symlink in docker logs:\n%s", l)
	}
	// A root file given to hermes is said: it may be an operator's secret
	// that hermes renamed to auth.json.
	if !strings.Contains(l, "[hermes-setup] giving root's /opt/data/auth.json to hermes (10000:10000)") {
		t.Errorf("docker logs do not say root's auth.json was given to hermes:\n%s", l)
	}
	if s, ok := c.status("gateway-rooty"); !ok || s.State != "down" {
		t.Errorf("gateway-rooty %+v (registered %v), want a down slot for the repaired profile", s, ok)
	}
}

// TestBootHookNamesProveNothing: hermes owns the volume's top dir, so it
// may rename another user's file to auth.json and another user's dir to
// cron, names the hook gives back at every boot. Such a boot gives hermes
// only what root owns there (what docker exec as root writes) and its own
// files of another group: the other user's file and dir keep their owner,
// root's file inside that dir too (it is not gone into), with a warning
// each. A .env mounted there (no rename put it there) is given to hermes
// as before. Before, the file and the dir became hermes', and hermes read
// what it could not.
func TestBootHookNamesProveNothing(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	env := filepath.Join(t.TempDir(), "hermes.env")
	if err := os.WriteFile(env, []byte("OPENAI_API_KEY=sk-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(env, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	c := start(t, []string{"-v", vol + ":/opt/data"}, "sleep", "infinity")
	c.booted()
	c.sh("root", `cd /opt/data && echo secret >notes.txt && chown 1000:1000 notes.txt && chmod 600 notes.txt &&
		mkdir hostdir && echo key >hostdir/key && echo rootkey >hostdir/rootkey && chmod 600 hostdir/rootkey &&
		chown 1000:1000 hostdir hostdir/key && chmod 755 hostdir &&
		mkdir -p profiles/rooty && echo soul >profiles/rooty/SOUL.md && touch profiles/regroup && chown 10000:55 profiles/regroup`)
	c.sh("hermes", `cd /opt/data && mv notes.txt auth.json && rm -rf cron && mv hostdir cron`)
	must(t, "stop", c.id)
	c = start(t, []string{"-v", vol + ":/opt/data", "-v", env + ":/opt/data/.env"}, "sleep", "infinity")
	c.booted()
	for p, want := range map[string]string{
		"/opt/data/auth.json":              "1000:1000 600",
		"/opt/data/cron":                   "1000:1000 755",
		"/opt/data/cron/key":               "1000:1000 644",
		"/opt/data/cron/rootkey":           "0:0 600",
		"/opt/data/profiles/rooty/SOUL.md": "10000:10000 644",
		"/opt/data/profiles/regroup":       "10000:10000 644",
		"/opt/data/.env":                   "10000:10000 600",
	} {
		if got := strings.TrimSpace(c.sh("root", "stat -c '%u:%g %a' "+p)); got != want {
			t.Errorf("%s is %s after the boot hook, want %s", p, got, want)
		}
	}
	l := c.logs()
	for _, want := range []string{
		"[hermes-setup] warning: left /opt/data/auth.json as it is: uid 1000's, not root's nor 10000's (10000 may have moved it there; give it to 10000 where it comes from)\n",
		"[hermes-setup] warning: left 1 entries of other users than root and 10000 in /opt/data/cron as they are, and did not go into their dirs\n",
	} {
		if !strings.Contains(l, want) {
			t.Errorf("logs lack %q:\n%s", want, l)
		}
	}
}

// TestBootstrapState: HERMES_GATEWAY_BOOTSTRAP_STATE=running on a fresh
// volume starts the root gateway at first boot.
func TestBootstrapState(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"-e", "HERMES_GATEWAY_BOOTSTRAP_STATE=running"}, "sleep", "infinity")
	c.booted()
	c.waitState("gateway-default", "up", 20*time.Second, up)
	if log := c.readFile("/opt/data/logs/container-boot.log"); !strings.HasSuffix(log, " profile=default prior_state=running action=started prior_exit=unknown\n") {
		t.Errorf("boot log %q", log)
	}
}

// TestBootHookRefusesLinks: the boot hook never changes a file through a
// hard link (a root-owned file linked into the volume keeps its owner, mode
// and bytes, though it sits in an every-boot tree and at .env), and never
// creates HERMES_REAL_HOME through a symlink above it.
func TestBootHookRefusesLinks(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	if r := runOnce(t, []string{"-v", vol + ":/opt/data", "--entrypoint", "/bin/sh"}, "-c", `set -e
		mkdir -p /opt/data/cron /opt/data/elsewhere
		chown -R 10000:10000 /opt/data
		echo shared >/opt/data/host_shared.json
		chown 0:4321 /opt/data/host_shared.json
		chmod 660 /opt/data/host_shared.json
		ln /opt/data/host_shared.json /opt/data/cron/x
		ln /opt/data/host_shared.json /opt/data/.env
		ln -s /etc /opt/data/elsewhere/up`); r.code != 0 {
		t.Fatalf("setting up the volume: exit %d: %s", r.code, r.stderr)
	}
	c := start(t, []string{"-v", vol + ":/opt/data", "-e", "HERMES_REAL_HOME=/opt/data/elsewhere/up/agent-home"}, "sleep", "infinity")
	c.booted()
	if got := strings.TrimSpace(c.sh("root", "stat -c '%u:%g %a %h' /opt/data/host_shared.json")); got != "0:4321 660 3" {
		t.Errorf("the hard-linked file is %q after the boot hook, want 0:4321 660 3 (owner, mode, links)", got)
	}
	if got := c.readFile("/opt/data/host_shared.json"); got != "shared\n" {
		t.Errorf("the hard-linked file holds %q after the boot hook, want %q", got, "shared\n")
	}
	if c.exists("/etc/agent-home") {
		t.Error("the hook made HERMES_REAL_HOME through the symlink /opt/data/elsewhere/up: /etc/agent-home exists")
	}
	l := c.logs()
	for _, want := range []string{
		"[hermes-setup] warning: refusing to change /opt/data/cron/x: it has other hard links",
		"[hermes-setup] warning: refusing to change /opt/data/.env: it has other hard links",
		"[hermes-setup] warning: refusing to go through symlink /opt/data/elsewhere/up",
	} {
		if !strings.Contains(l, want) {
			t.Errorf("docker logs lack %q:\n%s", want, l)
		}
	}
	if n := strings.Count(l, "refusing to change /opt/data/.env"); n != 1 {
		t.Errorf("the .env refusal is logged %d times, want once:\n%s", n, l)
	}
}

// TestBootHookSecretModes: .env and config.yaml seeded at first boot are
// 0600 and 0640 once the hook is done, even when the seeded .env already
// has its API_SERVER_KEY line; SOUL.md, 0444 in the image, is seeded
// writable by hermes.
func TestBootHookSecretModes(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"--entrypoint", "/bin/sh"}, "-c", `set -e
		echo API_SERVER_KEY= >/opt/hermes/.env.example
		echo 'model: x' >/opt/hermes/cli-config.yaml.example
		mkdir -p /opt/hermes/docker && echo soul >/opt/hermes/docker/SOUL.md && chmod 444 /opt/hermes/docker/SOUL.md
		exec /usr/local/bin/hinit sleep infinity`)
	c.booted()
	for p, want := range map[string]string{"/opt/data/.env": "10000:10000 600", "/opt/data/config.yaml": "10000:10000 640",
		"/opt/data/SOUL.md": "10000:10000 644"} {
		if got := strings.TrimSpace(c.sh("root", "stat -c '%u:%g %a' "+p)); got != want {
			t.Errorf("seeded %s is %q, want %q", p, got, want)
		}
	}
	// The seed's empty API_SERVER_KEY= is no key: a generated one replaces it.
	if env := c.readFile("/opt/data/.env"); !regexp.MustCompile(`^API_SERVER_KEY=[0-9a-f]{64}\n$`).MatchString(env) {
		t.Errorf(".env holds %q, want the generated API_SERVER_KEY in place of the empty one", env)
	}
}

// TestBootHookOperatorsFiles: a .env root may not write (bind-mounted
// read-only, as a Kubernetes secret is) gets no API_SERVER_KEY and a
// warning; the container starts. Before, the append failed under set -e and
// the hook's exit 2 stopped the container at every boot. And
// HERMES_REAL_HOME below the volume on a new volume makes each dir on the
// way hermes': $HERMES_HOME/home stayed root's before.
func TestBootHookOperatorsFiles(t *testing.T) {
	t.Parallel()
	env := filepath.Join(t.TempDir(), "hermes.env")
	if err := os.WriteFile(env, []byte("OPENAI_API_KEY=sk-test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, []string{"-v", env + ":/opt/data/.env:ro", "-e", "HERMES_REAL_HOME=/opt/data/home/hermes"}, "sleep", "infinity")
	c.booted()
	l := c.logs()
	if !strings.Contains(l, "hinit: boot hook done hook=hermes-setup") ||
		!strings.Contains(l, "[hermes-setup] warning: cannot add API_SERVER_KEY to /opt/data/.env") {
		t.Errorf("want the hook done, with a warning about .env:\n%s", l)
	}
	if b, _ := os.ReadFile(env); string(b) != "OPENAI_API_KEY=sk-test\n" {
		t.Errorf("the operator's .env is now %q", b)
	}
	for _, p := range []string{"/opt/data/home", "/opt/data/home/hermes"} {
		if got := strings.TrimSpace(c.sh("root", "stat -c %u:%g "+p)); got != "10000:10000" {
			t.Errorf("%s is %s, want hermes' (10000:10000)", p, got)
		}
	}
}

// TestBootHookUnreadableDir: a root without CAP_DAC_OVERRIDE (or on NFS
// with root_squash) cannot read a hermes dir of mode 0700; the hook says so
// and goes on, giving back what it can. A find failing there ended the hook
// under set -e, and the container stopped.
func TestBootHookUnreadableDir(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	if r := runOnce(t, []string{"-v", vol + ":/opt/data", "--entrypoint", "/bin/sh"}, "-c", `set -e
		mkdir -p /opt/data/profiles/private /opt/data/profiles/p1
		touch /opt/data/profiles/p1/f
		chown -R 10000:10000 /opt/data
		chmod 700 /opt/data/profiles/private
		chown 0:0 /opt/data/profiles/p1/f`); r.code != 0 {
		t.Fatalf("setting up the volume: exit %d: %s", r.code, r.stderr)
	}
	c := start(t, []string{"-v", vol + ":/opt/data", "--cap-drop", "DAC_OVERRIDE", "--cap-drop", "DAC_READ_SEARCH"}, "sleep", "infinity")
	c.booted()
	if got := strings.TrimSpace(c.sh("root", "stat -c %u:%g /opt/data/profiles/p1/f")); got != "10000:10000" {
		t.Errorf("profiles/p1/f is %s after the hook, want 10000:10000", got)
	}
	if l := c.logs(); !strings.Contains(l, "hinit: boot hook done hook=hermes-setup") {
		t.Errorf("the boot hook did not end well:\n%s", l)
	}
}

// TestBootHookStage2Steps: the steps of hermes' stage2-hook.sh after the
// seeding, as the real image has them: auth.json written once from
// HERMES_AUTH_JSON_BOOTSTRAP (hermes', 0600, never replaced: rotated
// tokens survive a restart), the Nous re-seed, config migration and skills
// sync run as hermes in stage2's order, the stale .install_method removed,
// a root SOUL.md of mode 0444 given back u+rw (it made hermes' migration
// roll back), lazy-packages seeded, and Playwright's
// Chromium (not the executable .so beside it) given to every later start
// as AGENT_BROWSER_EXECUTABLE_PATH.
func TestBootHookStage2Steps(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"--entrypoint", "/bin/sh", "-e", `HERMES_AUTH_JSON_BOOTSTRAP={"seed": 1}`,
		"-e", "HERMES_AUTH_JSON_REBOOTSTRAP=fresh", "-e", "PLAYWRIGHT_BROWSERS_PATH=/opt/pw",
		"-e", "S6_KILL_GRACETIME=25000", "-e", "S6_CMD_WAIT_FOR_SERVICES_MAXTIME=0"}, "-c", `set -e
		mkdir -p /opt/hermes/.venv/bin /opt/hermes/scripts /opt/hermes/tools /opt/pw/chromium_headless_shell-1/chrome-headless-shell-linux64
		printf '#!/bin/sh\necho "$(id -u) ${1##*/} $2 $HERMES_AUTH_JSON_REBOOTSTRAP" >>/tmp/py.log\necho "$PATH" >/tmp/py.path\n' >/opt/hermes/.venv/bin/python
		chmod 755 /opt/hermes/.venv/bin/python
		mkdir -p /opt/hermes/hermes_cli /etc/cont-init.d /etc/services.d /etc/s6-overlay/s6-rc.d/user/contents.d /etc/s6-overlay/s6-rc.d/user2/contents.d
		touch /opt/hermes/scripts/docker_config_migrate.py /opt/hermes/scripts/docker_rebootstrap_nous_session.py /opt/hermes/tools/skills_sync.py /opt/hermes/hermes_cli/git_credentials_boot.py
		touch /etc/cont-init.d/01-hermes-setup /etc/cont-init.d/50-derived /etc/s6-overlay/s6-rc.d/user/contents.d/dashboard /etc/s6-overlay/s6-rc.d/user/contents.d/derived /etc/s6-overlay/s6-rc.d/user2/contents.d/derived2
		touch /etc/services.d/dashboard
		cd /opt/pw/chromium_headless_shell-1/chrome-headless-shell-linux64
		touch libGLESv2.so chrome-headless-shell && chmod 755 libGLESv2.so chrome-headless-shell
		[ -e /opt/data/SOUL.md ] || { echo soul >/opt/data/SOUL.md; chmod 444 /opt/data/SOUL.md; }
		echo docker >/opt/data/.install_method
		exec /usr/local/bin/hinit sleep infinity`)
	c.booted()
	if got := strings.TrimSpace(c.sh("root", "stat -c '%u:%g %a' /opt/data/auth.json; cat /opt/data/auth.json")); got != "10000:10000 600\n{\"seed\": 1}" {
		t.Errorf("auth.json after the first boot: %q, want hermes', 600, the seed", got)
	}
	if got, want := c.readFile("/tmp/py.log"), "10000 docker_config_migrate.py  fresh\n10000 docker_rebootstrap_nous_session.py /opt/data/auth.json fresh\n10000 skills_sync.py  fresh\n10000 -m hermes_cli.git_credentials_boot fresh\n"; got != want {
		t.Errorf("python steps:\n%s\nwant:\n%s", got, want)
	}
	// A derived image's s6 parts, not hermes' own: a services.d/dashboard
	// is not the image's s6-rc dashboard.
	// The steps run as hermes get the container's whole PATH, hermes' own
	// dir included, though hinit gives the root hook root's dirs only.
	if got := strings.TrimSpace(c.readFile("/tmp/py.path")); !strings.Contains(got, "/opt/data/.local/bin") {
		t.Errorf("the python steps ran with PATH=%s, want the container's", got)
	}
	var warned []string
	s6vars := ""
	for _, l := range strings.Split(c.logs(), "\n") {
		if p, ok := strings.CutPrefix(l, "[hermes-setup] warning: "); ok && strings.Contains(p, " is for s6-overlay, which hinit replaces") {
			warned = append(warned, strings.Fields(p)[0])
		}
		if p, ok := strings.CutPrefix(l, "[hermes-setup] warning: "); ok && strings.Contains(p, "s6-overlay's settings, which hinit does not read") {
			s6vars = p
		}
	}
	// A stop budget left in s6-overlay's variables is named, with hinit's.
	if want := "S6_KILL_GRACETIME S6_CMD_WAIT_FOR_SERVICES_MAXTIME: s6-overlay's settings, which hinit does not read; set HINIT_SHUTDOWN_TIMEOUT"; !strings.HasPrefix(s6vars, want) {
		t.Errorf("the warning about S6_* variables: %q, want it to begin %q", s6vars, want)
	}
	if got, want := strings.Join(warned, " "), "/etc/s6-overlay/s6-rc.d/user/contents.d/derived /etc/s6-overlay/s6-rc.d/user2/contents.d/derived2 /etc/cont-init.d/50-derived /etc/services.d/dashboard"; got != want {
		t.Errorf("s6-overlay parts warned about: %q, want %q", got, want)
	}
	if got := strings.TrimSpace(c.sh("root", "stat -c '%u:%g %a' /opt/data/SOUL.md /opt/data/lazy-packages")); got != "10000:10000 644\n10000:10000 755" {
		t.Errorf("SOUL.md and lazy-packages: %q, want hermes' 644 and hermes' 755", got)
	}
	if c.exists("/opt/data/.install_method") {
		t.Error("the stale docker stamp .install_method is still there")
	}
	want := "/opt/pw/chromium_headless_shell-1/chrome-headless-shell-linux64/chrome-headless-shell"
	if got := c.sh("hermes", `with-contenv sh -c 'printf %s "$AGENT_BROWSER_EXECUTABLE_PATH"'`); got != want {
		t.Errorf("AGENT_BROWSER_EXECUTABLE_PATH through with-contenv: %q, want %q", got, want)
	}
	if got := strings.TrimSpace(c.sh("root", "stat -c '%a %U:%G' /run/hinit/env/AGENT_BROWSER_EXECUTABLE_PATH")); got != "640 root:hermes" {
		t.Errorf("the env file is %q, want 640 root:hermes", got)
	}

	c.sh("hermes", "printf rotated >/opt/data/auth.json")
	must(t, "restart", c.id)
	c.booted()
	if got := c.readFile("/opt/data/auth.json"); got != "rotated" {
		t.Errorf("auth.json after a restart: %q, want the rotated tokens kept", got)
	}
}

// TestBootHookStepHangs: a python step that hangs (hermes' config
// migration on a FIFO planted as config.yaml) is stopped when the steps'
// HERMES_SETUP_STEPS_TIMEOUT is up, with one warning, the next step is
// skipped with another, and the boot goes on: main starts. A timeout
// planted in hermes' own dir of the container's PATH (one that bounds
// nothing) is not the one used, and the step cannot stop the one that is
// (it is root's: the step sends SIGSTOP to every process it may first). Before, the
// hang held the hook until its 5m timeout stopped the container, at every
// boot; and a timeout run as hermes, stopped by its step, did the same.
func TestBootHookStepHangs(t *testing.T) {
	t.Parallel()
	c := start(t, []string{"--entrypoint", "/bin/sh", "-e", "HERMES_SETUP_STEPS_TIMEOUT=2"}, "-c", `set -e
		mkdir -p /opt/data/.local/bin && printf '#!/bin/sh\nwhile case $1 in -k) shift 2 ;; [0-9]*) shift ;; *) false ;; esac; do :; done\nexec "$@"\n' >/opt/data/.local/bin/timeout
		chmod 755 /opt/data/.local/bin/timeout && chown -R 10000:10000 /opt/data/.local
		mkdir -p /opt/hermes/.venv/bin /opt/hermes/scripts /opt/hermes/tools
		printf '#!/bin/sh\necho "${1##*/}" >>/tmp/py.log\nkill -STOP -1 2>/dev/null\n[ "${1##*/}" != docker_config_migrate.py ] || exec cat /opt/data/config.yaml\n' >/opt/hermes/.venv/bin/python
		chmod 755 /opt/hermes/.venv/bin/python
		touch /opt/hermes/scripts/docker_config_migrate.py /opt/hermes/tools/skills_sync.py
		rm -f /opt/data/config.yaml && mkfifo /opt/data/config.yaml && chown 10000:10000 /opt/data/config.yaml
		exec /usr/local/bin/hinit sleep infinity`)
	c.booted()
	if got, want := c.readFile("/tmp/py.log"), "docker_config_migrate.py\n"; got != want {
		t.Errorf("python steps:\n%s\nwant:\n%s", got, want)
	}
	l := c.logs()
	for _, want := range []string{
		"[hermes-setup] warning: config migration did not finish within the steps' 2s (HERMES_SETUP_STEPS_TIMEOUT): stopped; the boot goes on\n",
		"[hermes-setup] warning: skills sync skipped: the steps' 2s (HERMES_SETUP_STEPS_TIMEOUT) are spent\n",
		"hinit: boot hook done hook=hermes-setup",
	} {
		if !strings.Contains(l, want) {
			t.Errorf("logs lack %q:\n%s", want, l)
		}
	}
	if ps := c.sh("root", "grep -lx cat /proc/[0-9]*/comm 2>/dev/null | wc -l"); strings.TrimSpace(ps) != "0" {
		t.Errorf("%s cat processes left, want the hung step gone", strings.TrimSpace(ps))
	}
}

// TestBootHookRunsNothingFromHermesPATH: the image's PATH, as the official
// image's, holds /opt/data/.local/bin, in the hermes user's own volume,
// ahead of /usr/bin. The boot hook runs as root: a program hermes planted
// there under the name of a command the hook runs (id, tr, s6-setuidgid...)
// ran as root at the next boot. Now the hook looks commands up in root's
// dirs only, for what it runs as hermes too (sh, cp, mkdir): one planted
// there ran as hermes and, hanging, held every boot until the hook's
// timeout stopped the container. Only hermes' python steps find hermes'
// own, and the container's processes after the boot.
func TestBootHookRunsNothingFromHermesPATH(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	c := start(t, []string{"-v", vol + ":/opt/data", "-e", `HERMES_AUTH_JSON_BOOTSTRAP={"seed": 1}`}, "sleep", "infinity")
	c.booted()
	// Next boot, the hook has work that looks programs up: auth.json to
	// seed again through s6-setuidgid, and a root file in cron/ to give
	// back with find -exec chown.
	if r := c.exec("root", "/bin/touch", "/opt/data/cron/root-wrote-this"); r.code != 0 {
		t.Fatalf("touch as root: exit %d: %s", r.code, r.stderr)
	}
	c.sh("hermes", `set -e
		rm /opt/data/auth.json /opt/data/.env
		rmdir /opt/data/plans
		mkdir -p /opt/data/.local/bin
		cd /opt/data/.local/bin
		for n in id stat chown chmod find mkdir tr awk sed mv cp rm ln cat head grep touch sort wc sh s6-setuidgid setpriv; do
			printf '#!/bin/sh
echo "$(/bin/id -u) ${0##*/}" >>/opt/data/.local/ran
PATH=/usr/local/bin:/usr/bin:/bin
exec "${0##*/}" "$@"
' >$n
			chmod 755 $n
		done`)
	must(t, "restart", c.id)
	c.booted()
	// Root's reads here name their program by path: docker exec looks a
	// bare name up in the container's PATH too.
	if ran := c.exec("root", "/bin/cat", "/opt/data/.local/ran").stdout; ran != "" {
		t.Errorf("programs planted by hermes ran in the boot hook:\n%s", ran)
	}
	if got := c.exec("root", "/bin/stat", "-c", "%u:%g %a", "/opt/data/auth.json", "/opt/data/cron/root-wrote-this", "/opt/data/.env", "/opt/data/plans").stdout; got != "10000:10000 600\n10000:10000 644\n10000:10000 600\n10000:10000 755\n" {
		t.Errorf("auth.json, cron/root-wrote-this, .env and plans after the boot: %q, want hermes' 600, 644, 600 and 755", got)
	}
	// The plant is where the container's PATH looks: a lookup as hermes finds
	// it. (The test image's busybox sh runs its applets, id among them,
	// without a lookup; find -exec, s6-setuidgid and docker exec look.)
	if r := c.exec("hermes", "id", "-u"); r.code != 0 || r.stdout != "10000\n" {
		t.Fatalf("id -u as hermes: exit %d, %q", r.code, r.stdout)
	}
	if got := c.exec("root", "/bin/tail", "-n", "1", "/opt/data/.local/ran").stdout; got != "10000 id\n" {
		t.Errorf("docker exec -u hermes id did not run the planted id (last line %q): the test plants nothing a lookup finds", got)
	}
}

// TestBootHookStampEdges: an .install_method the hermes user made huge (a
// sparse file costs no space: the hook read it whole, at about 78 MB/s, so
// a terabyte outlasted its 5 min timeout and stopped the container; 20 GB
// here, minutes) or one that cannot be removed (a bind-mounted file: rm
// failing ended the hook under set -e) leaves the boot as it was.
func TestBootHookStampEdges(t *testing.T) {
	t.Parallel()
	stamp := filepath.Join(t.TempDir(), "install_method")
	if err := os.WriteFile(stamp, []byte("docker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string][]string{
		"huge":  {"--entrypoint", "/bin/sh"},
		"bound": {"-v", stamp + ":/opt/data/.install_method"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := []string{"sleep", "infinity"}
			if name == "huge" {
				cmd = []string{"-c", "truncate -s 20G /opt/data/.install_method && exec /usr/local/bin/hinit sleep infinity"}
			}
			c := start(t, opts, cmd...)
			c.booted()
			if l := c.logs(); !strings.Contains(l, "hinit: boot hook done hook=hermes-setup") {
				t.Errorf("the boot hook did not end well:\n%s", l)
			}
		})
	}
}

// TestBootHookAPIKeyLine: the generated API_SERVER_KEY replaces an empty
// `API_SERVER_KEY=` line (as stage2's sed -i drops it) instead of following
// it: hermes' .env writer updates the first line of a name and the last one
// is read, so a key set later through hermes was shadowed by the generated
// one. A .env whose last line lacks its newline gets one before the key,
// which was glued into that line's value. .env stays hermes' and 0600.
func TestBootHookAPIKeyLine(t *testing.T) {
	t.Parallel()
	key := `API_SERVER_KEY=[0-9a-f]{64}\n`
	for what, tc := range map[string]struct{ env, want string }{
		"empty key line":    {`FOO=1\nAPI_SERVER_KEY=\nBAR=2`, `^FOO=1\nBAR=2\n` + key + `600 10000:10000\n$`},
		"no last newline":   {`FOO=1`, `^FOO=1\n` + key + `600 10000:10000\n$`},
		"only an empty key": {`API_SERVER_KEY=\n`, `^` + key + `600 10000:10000\n$`},
	} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			vol := volume(t)
			seed(t, vol, `printf '`+tc.env+`' >/opt/data/.env && chmod 600 /opt/data/.env`)
			r := runOnce(t, []string{"-v", vol + ":/opt/data"}, "sh", "-c", "cat /opt/data/.env && stat -c '%a %u:%g' /opt/data/.env")
			if r.code != 0 || !regexp.MustCompile(tc.want).MatchString(r.stdout) {
				t.Errorf("exit %d, .env and its mode:\n%s\nwant %s", r.code, r.stdout, tc.want)
			}
		})
	}
}

// TestBootHookOperatorKey: an API_SERVER_KEY given to the container
// (docker run -e) wins: no key is generated into .env, which hermes loads
// over the environment, so a generated key shadowed the operator's and
// every client using it got 401; an empty API_SERVER_KEY= line, which
// would shadow it with nothing, is dropped. A key in both places, and a
// key too short for hermes' API server, are warned about.
func TestBootHookOperatorKey(t *testing.T) {
	t.Parallel()
	const long = "0123456789abcdef0123"
	for what, tc := range map[string]struct{ key, env, want, warning string }{
		"empty key line": {long, `FOO=1\nAPI_SERVER_KEY=\nBAR=2\n`, "FOO=1\nBAR=2\n600 10000:10000\n", ""},
		"no key line":    {long, `FOO=1\n`, "FOO=1\n600 10000:10000\n", ""},
		"in both": {long, `API_SERVER_KEY=fedcba9876543210fedc\n`, "API_SERVER_KEY=fedcba9876543210fedc\n600 10000:10000\n",
			"[hermes-setup] warning: API_SERVER_KEY is set in both the container environment and /opt/data/.env: the .env value wins"},
		"too short": {"short", `FOO=1\n`, "FOO=1\n600 10000:10000\n",
			"[hermes-setup] warning: the container's API_SERVER_KEY is shorter than 16 characters"},
	} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			vol := volume(t)
			seed(t, vol, `printf '`+tc.env+`' >/opt/data/.env && chmod 600 /opt/data/.env`)
			r := runOnce(t, []string{"-v", vol + ":/opt/data", "-e", "API_SERVER_KEY=" + tc.key}, "sh", "-c", "cat /opt/data/.env && stat -c '%a %u:%g' /opt/data/.env")
			if r.code != 0 || r.stdout != tc.want {
				t.Errorf("exit %d, .env and its mode:\n%s\nwant:\n%s", r.code, r.stdout, tc.want)
			}
			if strings.Contains(r.stderr, "generated API_SERVER_KEY") || !strings.Contains(r.stderr, tc.warning) {
				t.Errorf("the hook's lines:\n%s\nwant no generated key and %q", r.stderr, tc.warning)
			}
		})
	}
}

// TestBootHookCreatesEnv: an image with no .env.example to seed .env from
// (the test image has none) still gets a key: an empty .env, hermes' and
// 0600, is made to hold it. Before, there was no .env, no key and no API
// server. With the container's own key, no .env is made.
func TestBootHookCreatesEnv(t *testing.T) {
	t.Parallel()
	show := "if [ -e /opt/data/.env ]; then cat /opt/data/.env; stat -c '%a %u:%g' /opt/data/.env; else echo none; fi"
	r := runOnce(t, nil, "sh", "-c", show)
	if want := regexp.MustCompile(`^API_SERVER_KEY=[0-9a-f]{64}\n600 10000:10000\n$`); r.code != 0 || !want.MatchString(r.stdout) {
		t.Errorf("exit %d, .env: %q; want a generated key in a 0600 .env of hermes'\n%s", r.code, r.stdout, r.stderr)
	}
	r = runOnce(t, []string{"-e", "API_SERVER_KEY=0123456789abcdef0123"}, "sh", "-c", show)
	if r.code != 0 || r.stdout != "none\n" {
		t.Errorf("with the container's own key: exit %d, .env: %q; want none", r.code, r.stdout)
	}
}

// Root changes no file of another owner by its name in hermes' dir: a .env
// the hook could not give hermes (here a host's file, with CAP_CHOWN
// dropped) keeps its mode and content, with a warning for each. Before,
// root chmodded and appended to it by path, and a hermes process of
// another container on the volume could swap it for a symlink between the
// check and the write: root's chmod 600 landed on /usr/local/bin/hinit.
func TestBootHookLeavesOthersEnvAlone(t *testing.T) {
	t.Parallel()
	env := filepath.Join(t.TempDir(), "hermes.env")
	if err := os.WriteFile(env, []byte("FOO=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(env, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	r := runOnce(t, []string{"--cap-drop", "CHOWN", "-v", env + ":/opt/data/.env"}, "sh", "-c", "stat -c '%a %u' /opt/data/.env; cat /opt/data/.env")
	if r.code != 0 || r.stdout != "644 0\nFOO=1\n" {
		t.Errorf("exit %d, .env's mode, owner and content %q; want 0, %q\n%s", r.code, r.stdout, "644 0\nFOO=1\n", r.stderr)
	}
	for _, w := range []string{"[hermes-setup] warning: /opt/data/.env is not hermes' and keeps its mode 644: make it 600 where it comes from",
		"[hermes-setup] warning: cannot add API_SERVER_KEY to /opt/data/.env: it is not hermes' (uid 0)"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("no %q in:\n%s", w, r.stderr)
		}
	}
}

// The copy of .env that drops an empty API_SERVER_KEY= line is a new file
// of a name nobody could plant beforehand: root writes it in hermes' dir.
// With the copy at .env.hinit-<pid>, a symlink planted there by hermes (in
// a former run) to /etc/passwd had root overwrite it with .env.
func TestBootHookEnvCopyNotPlanted(t *testing.T) {
	t.Parallel()
	vol := volume(t)
	seed(t, vol, `printf 'API_SERVER_KEY=\n' >/opt/data/.env && chmod 600 /opt/data/.env && chown 10000:10000 /opt/data/.env &&
		i=1; while [ $i -le 300 ]; do ln -s /etc/passwd /opt/data/.env.hinit-$i; chown -h 10000:10000 /opt/data/.env.hinit-$i; i=$((i+1)); done`)
	r := runOnce(t, []string{"-v", vol + ":/opt/data"}, "sh", "-c", "grep -c '^root:' /etc/passwd; grep -c '^API_SERVER_KEY=.' /opt/data/.env")
	if r.code != 0 || r.stdout != "1\n1\n" {
		t.Errorf("exit %d, stdout %q (root's lines in /etc/passwd, keys in .env); want 0, %q\n%s", r.code, r.stdout, "1\n1\n", r.stderr)
	}
}

// A mount inside a tree given back to hermes (here read-only) is the
// operator's: not gone into, quietly. Before, it cost a warning line per
// boot (and, before that, a chown error per file; stage2 sends those to
// /dev/null); a read-write one was chowned.
func TestBootHookLeavesAMountInATree(t *testing.T) {
	t.Parallel()
	host := t.TempDir()
	for _, f := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(host, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vol := volume(t)
	r := runOnce(t, []string{"-v", vol + ":/opt/data", "-v", host + ":/opt/data/cron/shared:ro"}, "true")
	out := r.stdout + r.stderr
	if n := strings.Count(out, "Read-only file system"); n != 0 {
		t.Errorf("%d chown errors, want none:\n%s", n, out)
	}
	if r.code != 0 || strings.Contains(out, "cannot chown") {
		t.Errorf("exit %d, want 0 and no chown warning in:\n%s", r.code, out)
	}
}
