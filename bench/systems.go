package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Systems' names as they appear in the results.
const (
	sysFloor      = "floor"
	sysHinit      = "hinit"
	sysS6         = "s6"
	sysSupervisor = "supervisord"
	sysTini       = "tini"
	sysDumbInit   = "dumb-init"
	sysCatatonit  = "catatonit"
)

// Peers' programs, from Debian's packages.
const (
	s6Svscan      = "/usr/bin/s6-svscan"
	s6Svscanctl   = "/usr/bin/s6-svscanctl"
	s6Svstat      = "/usr/bin/s6-svstat"
	supervisord   = "/usr/bin/supervisord"
	supervisorctl = "/usr/bin/supervisorctl"
	tiniPath      = "/usr/bin/tini"
	dumbInitPath  = "/usr/bin/dumb-init"
	catatonitPath = "/usr/bin/catatonit"
)

// svc is one service of a workload: the probe in a mode.
type svc struct {
	name  string
	mode  string        // a probe mode: sleep, ignore-term, crash, orphans
	arg   string        // the mode's argument (orphans: how many)
	stopT time.Duration // kill timeout after the stop signal; 0: the system's default
	crash bool          // hinit: backoff {initial: 500ms, max: 4s}
}

// sleepers is n cooperative services svc0..svcN-1.
func sleepers(n int) []svc {
	out := make([]svc, n)
	for i := range out {
		out[i] = svc{name: fmt.Sprintf("svc%d", i), mode: "sleep"}
	}
	return out
}

// names lists the services' names.
func names(svcs []svc) []string {
	out := make([]string, len(svcs))
	for i, s := range svcs {
		out[i] = s.name
	}
	return out
}

// supervisor is a system that supervises services itself.
type supervisor struct {
	name    string
	prepare func(h *Harness, dir string, svcs []svc) (launch, error)
	tree    func(in *instance) ([]int, error) // pids of the supervision tree, services excluded
}

// supervisors are hinit and the peers that supervise services.
var supervisors = []supervisor{
	{sysHinit, prepareHinit, initOnly},
	{sysS6, prepareS6, s6Tree},
	{sysSupervisor, prepareSupervisord, initOnly},
}

// initOnly: the supervision tree is the init alone (hinit, supervisord).
func initOnly(in *instance) ([]int, error) { return []int{in.pid}, nil }

// s6Tree: s6-svscan and every s6-supervise.
func s6Tree(in *instance) ([]int, error) {
	ps, err := members(in.pid)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range ps {
		if p.comm == "s6-svscan" || p.comm == "s6-supervise" {
			out = append(out, p.pid)
		}
	}
	return out, nil
}

// probeArgv is the probe's command line for a service.
func (h *Harness) probeArgv(s svc) []string {
	argv := []string{h.probe, s.mode, s.name}
	if s.arg != "" {
		argv = append(argv, s.arg)
	}
	return argv
}

// hinitEnv points hinit's runtime dir, scandir and configuration into dir.
func hinitEnv(dir, config string) []string {
	return []string{
		"HINIT_CONFIG=" + config,
		"HINIT_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"HINIT_SCANDIR=" + filepath.Join(dir, "scandir"),
	}
}

// prepareHinit writes hinit.yaml with svcs as static services; main is a
// sleeping probe (hinit always has a main program).
func prepareHinit(h *Harness, dir string, svcs []svc) (launch, error) {
	var b strings.Builder
	b.WriteString("services:\n")
	for _, s := range svcs {
		fmt.Fprintf(&b, "  %s:\n", s.name)
		b.WriteString(hinitService(h, s, "    "))
	}
	cfg := filepath.Join(dir, "hinit.yaml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		return launch{}, fmt.Errorf("write %s: %w", cfg, err)
	}
	argv := append([]string{h.hinit}, h.probeArgv(svc{name: "main", mode: "sleep"})...)
	return launch{argv: argv, env: hinitEnv(dir, cfg)}, nil
}

// hinitService is one service's YAML mapping, each line indented.
func hinitService(h *Harness, s svc, indent string) string {
	var b strings.Builder
	quoted := make([]string, 0, 4)
	for _, a := range h.probeArgv(s) {
		quoted = append(quoted, fmt.Sprintf("%q", a))
	}
	fmt.Fprintf(&b, "%scommand: [%s]\n", indent, strings.Join(quoted, ", "))
	if s.crash {
		fmt.Fprintf(&b, "%sbackoff: {initial: 500ms, max: 4s}\n", indent)
	}
	if s.stopT > 0 {
		fmt.Fprintf(&b, "%sstop: {signal: TERM, timeout: %s}\n", indent, s.stopT)
	}
	return b.String()
}

// prepareS6 builds a scandir with one service dir per service: run is a
// symlink to the probe, probe-mode its mode, timeout-kill its kill timeout.
func prepareS6(h *Harness, dir string, svcs []svc) (launch, error) {
	scan := filepath.Join(dir, "scandir")
	for _, s := range svcs {
		if err := s6ServiceDir(h, filepath.Join(scan, s.name), s); err != nil {
			return launch{}, err
		}
	}
	argv := []string{s6Svscan, scan}
	if len(svcs) > s6DefaultMax-100 { // with room for services added later
		argv = []string{s6Svscan, "-c", fmt.Sprint(2 * len(svcs)), scan}
	}
	return launch{argv: argv}, nil
}

// s6DefaultMax is how many services s6-svscan 2.11 supervises without -c:
// more are refused with "too many services".
const s6DefaultMax = 500

// s6ServiceDir writes one s6 service dir at path.
func s6ServiceDir(h *Harness, path string, s svc) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("mkdir %s: %w", path, err)
	}
	if err := os.Symlink(h.probe, filepath.Join(path, "run")); err != nil {
		return fmt.Errorf("symlink run in %s: %w", path, err)
	}
	files := map[string]string{}
	if s.mode != "sleep" {
		files["probe-mode"] = strings.TrimSpace(s.mode + " " + s.arg)
	}
	if s.stopT > 0 {
		files["timeout-kill"] = fmt.Sprint(s.stopT.Milliseconds())
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(path, name), []byte(content+"\n"), 0o644); err != nil {
			return fmt.Errorf("write %s in %s: %w", name, path, err)
		}
	}
	return nil
}

// prepareSupervisord writes supervisord.conf with one [program:] section
// per service, a control socket for supervisorctl and an include dir for
// services added later. Everything else is supervisord's default.
func prepareSupervisord(h *Harness, dir string, svcs []svc) (launch, error) {
	conf := filepath.Join(dir, "supervisord.conf")
	if err := os.MkdirAll(filepath.Join(dir, "conf.d"), 0o755); err != nil {
		return launch{}, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "childlogs"), 0o755); err != nil {
		return launch{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `[supervisord]
nodaemon=true
user=root
logfile=%[1]s/supervisord.log
pidfile=%[1]s/supervisord.pid
childlogdir=%[1]s/childlogs
minfds=16384

[unix_http_server]
file=%[1]s/supervisor.sock

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://%[1]s/supervisor.sock

[include]
files = %[1]s/conf.d/*.conf

`, dir)
	for _, s := range svcs {
		b.WriteString(supervisordProgram(h, s))
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		return launch{}, fmt.Errorf("write %s: %w", conf, err)
	}
	return launch{argv: []string{supervisord, "-n", "-c", conf}}, nil
}

// supervisordProgram is one [program:] section.
func supervisordProgram(h *Harness, s svc) string {
	sec := fmt.Sprintf("[program:%s]\ncommand=%s\nautorestart=true\n", s.name, strings.Join(h.probeArgv(s), " "))
	if s.stopT > 0 {
		sec += fmt.Sprintf("stopwaitsecs=%d\n", int(s.stopT.Round(time.Second)/time.Second))
	}
	return sec + "\n"
}

// simpleInit is an init that runs one program and reaps (tini, dumb-init,
// catatonit), with argv after its own options.
func simpleInit(system string, argv []string) []string {
	switch system {
	case sysTini:
		return append([]string{tiniPath, "--"}, argv...)
	case sysDumbInit:
		return append([]string{dumbInitPath}, argv...)
	case sysCatatonit:
		return append([]string{catatonitPath, "--"}, argv...)
	}
	panic("not a simple init: " + system)
}
