package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"hinit/account"
	"hinit/asuser"
	"hinit/config"
	"hinit/reaper"
	"hinit/svclog"
)

// instance is one run of a service's process.
type instance struct {
	pid     int
	started time.Time
	done    <-chan reaper.Status
	ready   chan struct{} // closed when the process reported ready
	cancel  context.CancelFunc
	def     *config.Service // expanded for this run
	acct    *account.Account
}

// spawn starts a new instance from the current definition, expanded against
// the container environment of this moment. A failure to start counts as a
// quick exit with 127 (not found) or 126 (cannot execute).
func (r *runner) spawn() {
	env := r.deps.Environ()
	def := r.def.Expanded(env)
	inst, err := r.startProcess(def, env)
	if err != nil {
		r.deps.Log.Error("cannot start", "svc", r.name, "err", err)
		r.lastExit = &Exit{Code: ExecFailureCode(err), At: time.Now()}
		r.afterExit(def, 0, err.Error(), true)
		return
	}
	r.proc = inst
	r.deps.Log.Info("started", "svc", r.name, "pid", inst.pid)
	if inst.ready == nil {
		r.set(StateUp, "")
		return
	}
	r.set(StateStarting, "")
}

func (r *runner) startProcess(def *config.Service, env map[string]string) (*instance, error) {
	if len(def.Command) == 0 {
		return nil, fmt.Errorf("no command")
	}
	acct, err := r.account(def.User)
	if err != nil {
		return nil, err
	}
	environ := buildEnv(env, acct, def.Env)
	argv0, err := LookPath(def.Command[0], environ)
	if err != nil {
		return nil, err
	}
	dir := def.Workdir
	if dir == "" {
		dir = acct.Home
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if def.Workdir != "" {
			return nil, fmt.Errorf("workdir %s: not a directory", dir)
		}
		dir = "/"
	}
	log, err := r.openLog(def, acct)
	if err != nil {
		return nil, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	files := r.io.files(devnull, log.Writer())
	inst := &instance{def: def, acct: acct}
	ctx, cancel := context.WithCancel(context.Background())
	inst.cancel = cancel
	notify, err := r.readiness(ctx, inst, &files)
	if err != nil {
		cancel()
		return nil, err
	}
	attr := &syscall.ProcAttr{Dir: dir, Env: EnvList(environ), Files: files,
		Sys: &syscall.SysProcAttr{Setsid: true, Credential: r.credential(acct)}}
	pid, done, err := r.deps.Spawner.Start(argv0, def.Command, attr)
	if notify != nil {
		notify.Close() // the child has its copy
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("exec %s: %w", def.Command[0], err)
	}
	inst.pid, inst.done, inst.started = pid, done, time.Now()
	return inst, nil
}

// account resolves who the service runs as. When hinit is not root nothing
// can be switched, so the service runs as hinit's own user.
func (r *runner) account(spec string) (*account.Account, error) {
	if !r.deps.Root {
		return account.Lookup(fmt.Sprint(os.Getuid()))
	}
	if spec == "" {
		spec = r.deps.DefaultUser
	}
	if spec == "" {
		spec = "0"
	}
	return account.Lookup(spec)
}

func (r *runner) credential(a *account.Account) *syscall.Credential {
	if !r.deps.Root {
		return nil
	}
	return Credential(a)
}

// Credential is the process credential of a: uid, gid and supplementary
// groups.
func Credential(a *account.Account) *syscall.Credential {
	groups := make([]uint32, len(a.Groups))
	for i, g := range a.Groups {
		groups[i] = uint32(g)
	}
	return &syscall.Credential{Uid: uint32(a.UID), Gid: uint32(a.GID), Groups: groups}
}

// openLog returns the service's log, opening it at the first start and
// again whenever the log settings changed (the old one drains in the
// background).
func (r *runner) openLog(def *config.Service, acct *account.Account) (*svclog.Log, error) {
	opts := svclog.Options{
		Name: r.name, Dir: def.Log.Dir, MaxSize: def.Log.MaxSize, Keep: def.Log.Keep,
		Owner:  asuser.ID{UID: acct.UID, GID: acct.GID, Groups: acct.Groups},
		Logger: r.deps.Log,
	}
	if def.Log.ConsoleOn() && r.deps.Console != nil {
		opts.Console = r.deps.Console
	}
	key := fmt.Sprintf("%s|%d|%d|%v|%d", opts.Dir, opts.MaxSize, opts.Keep, opts.Console != nil, acct.UID)
	if r.log != nil && key == r.logKey {
		return r.log, nil
	}
	log, err := svclog.New(opts)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	if r.log != nil {
		r.retired = append(r.retired, r.log)
	}
	r.log, r.logKey = log, key
	return log, nil
}

// closeLogs flushes and closes every log of the service once its processes
// are gone.
func (r *runner) closeLogs() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, l := range append(r.retired, r.log) {
		if l != nil {
			l.Close(ctx)
		}
	}
}

// buildEnv is the container environment, then HOME, USER and LOGNAME of
// the service's user, then the service's own env.
func buildEnv(base map[string]string, acct *account.Account, own map[string]string) map[string]string {
	env := make(map[string]string, len(base)+len(own)+3)
	for k, v := range base {
		env[k] = v
	}
	for k, v := range acct.Env() {
		env[k] = v
	}
	for k, v := range own {
		env[k] = v
	}
	return env
}

// EnvList turns an environment map into sorted KEY=VALUE entries.
func EnvList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// ErrNotFound is returned when a command is not on PATH.
var ErrNotFound = errors.New("executable file not found in $PATH")

// LookPath finds file on the PATH of env (the process's, not hinit's).
func LookPath(file string, env map[string]string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	path, ok := env["PATH"]
	if !ok {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: %w", file, ErrNotFound)
}

// ExecFailureCode is what a shell reports for a command it cannot run:
// 127 when it does not exist, 126 when it cannot be executed.
func ExecFailureCode(err error) int {
	if errors.Is(err, ErrNotFound) || errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}
