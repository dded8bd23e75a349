package pid1

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"hinit/cgroup"
	"hinit/config"
	"hinit/contenvd"
	"hinit/launch"
	"hinit/signame"
)

// writeEnvDir writes the boot environment to $HINIT_RUNTIME_DIR/env (SPEC
// §2 step 3): hinit's environment plus env: of hinit.yaml, one file per
// variable, readable by root and the image user's group only.
func (h *hinit) writeEnvDir() {
	if h.set.runtimeDir == "" {
		return
	}
	dir := contenvd.Dir(h.set.runtimeDir)
	env := h.bootEnviron()
	wrote, err := contenvd.Write(dir, launch.EnvList(env), h.userGID(), h.log)
	if err != nil {
		h.log.Error(fmt.Sprintf("environment dir: %v; services get hinit's own environment", err))
		return
	}
	h.envDir = dir
	h.wroteEnv = wrote
	h.log.Info("container environment written", "dir", dir, "vars", len(env))
}

// environAfterHooks is the environment the boot starts its services
// with: the environment dir as the boot hooks left it. Without hooks that
// is what writeEnvDir has just written, so it is not read back.
func (h *hinit) environAfterHooks() map[string]string {
	if h.wroteEnv != nil && len(h.set.cfg.Boot) == 0 {
		env := h.wroteEnv // the dir's content: a good reading
		h.lastEnv.Store(&env)
		return env
	}
	return h.containerEnv()
}

// containerEnv is the environment every start sees, read afresh: the
// environment dir as boot hooks left it, or hinit's own environment plus
// env: of hinit.yaml when there is no such dir. While the boot starts its
// services it is the one reading made after the boot hooks (bootEnv): until
// main runs, only hinit and root's hooks could have changed the dir, and a
// thousand services then cost one reading instead of a thousand. A
// reading that fails (hinit out of descriptors, a hung /run) gives the
// last good one: hinit's own environment lacks what boot hooks and
// with-contenv writers put there. The map may be shared: callers must not
// modify it.
func (h *hinit) containerEnv() map[string]string {
	if env := h.bootEnv.Load(); env != nil {
		return *env
	}
	if h.envDir != "" {
		env, err := contenvd.Read(h.envDir)
		if err == nil {
			h.lastEnv.Store(&env)
			return env
		}
		if last := h.lastEnv.Load(); last != nil {
			h.log.Warn("environment dir unreadable: using its last good reading", "err", err)
			return *last
		}
		h.log.Warn("environment dir unreadable: using hinit's own environment", "err", err)
	}
	return h.bootEnviron()
}

// bootEnviron is hinit's own environment plus env: of hinit.yaml, whose
// ${VAR} references are expanded against hinit's own environment (never
// against each other, which would depend on map order).
func (h *hinit) bootEnviron() map[string]string {
	own := launch.ProcessEnv()
	env := make(map[string]string, len(own)+len(h.set.cfg.Env))
	for k, v := range own {
		env[k] = v
	}
	for k, v := range h.set.cfg.Env {
		env[k] = config.Expand(v, own)
	}
	return env
}

// runHooks runs the boot hooks of hinit.yaml one by one, as root, with the
// container environment, each under its timeout (SPEC §2 step 4). It
// returns the status to exit with when a hook with on_failure: stop failed,
// or -1 to go on.
func (h *hinit) runHooks() int {
	for _, hook := range h.set.cfg.Boot {
		status, err := h.runHook(hook)
		if errors.Is(err, errInterrupted) {
			h.logToStderrAgain() // main will not run: the terminal is nobody's
			h.log.Info("boot interrupted: stopping the container", "hook", hook.Name, "err", err)
			return status
		}
		if status == 0 && err == nil {
			h.log.Info("boot hook done", "hook", hook.Name)
			continue
		}
		if err == nil {
			err = fmt.Errorf("exit status %d", status)
		}
		if hook.OnFailure == "continue" {
			h.log.Warn("boot hook failed: going on (on_failure: continue)", "hook", hook.Name, "err", err)
			continue
		}
		h.logToStderrAgain()
		h.log.Error("boot hook failed: stopping the container (on_failure: stop)", "hook", hook.Name, "err", err)
		if status == 0 {
			status = 1
		}
		return status
	}
	return -1
}

// hookOutputWait bounds how long a hook's end waits for the last of its
// output to be copied into hinit.log: a process it left behind may hold
// the pipe open for good, and the copy then goes on meanwhile.
const hookOutputWait = 100 * time.Millisecond

// copyHookOutput copies what a boot hook writes to r into hinit's log (in
// TTY mode, hinit.log, kept bounded as hinit's own lines are) until every
// writer has closed the pipe; the channel is closed then.
func (h *hinit) copyHookOutput(r *os.File) <-chan struct{} {
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer r.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				h.logh.writeRaw(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return copied
}

// awaitHookOutput waits for a hook's output to be copied, at most
// hookOutputWait: its lines come before the line that says how it ended.
func awaitHookOutput(copied <-chan struct{}) {
	t := time.NewTimer(hookOutputWait)
	defer t.Stop()
	select {
	case <-copied:
	case <-t.C:
	}
}

// errInterrupted says a shutdown signal (docker stop) came during the boot.
var errInterrupted = errors.New("interrupted")

// runHook runs one hook in its own process group and returns its exit
// status; a hook that outlives its timeout is killed with its group and
// gets status 124, as timeout(1) reports. A shutdown signal during the
// hook (docker stop while the image sets itself up) stops the hook the same
// way and ends the boot with 128+N: a container must answer docker stop
// even before main runs; so does -p's signal when hinit's parent died,
// with 128+N as well. A shutdown signal hinit inherited ignored stops
// nothing, as in loop. Other signals have no main to go to yet.
func (h *hinit) runHook(hook config.Hook) (int, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 1, err
	}
	defer devnull.Close()
	// The container's stdout and stderr; with a terminal, a pipe that
	// hinit copies into hinit.log. A descriptor of hinit.log itself,
	// inherited by whatever the hook starts (as hermes too), would let that
	// process empty root's log, or make it gigabytes that its rotation
	// then copied.
	out, errOut := uintptr(1), uintptr(2)
	var w *os.File
	var copied <-chan struct{}
	if h.ttyLog != nil {
		var r *os.File
		if r, w, err = os.Pipe(); err != nil {
			return 1, err
		}
		defer w.Close()
		out, errOut = w.Fd(), w.Fd()
		copied = h.copyHookOutput(r)
	}
	prog := launch.Program{Argv: hook.Command, Env: h.containerEnv(), Files: []uintptr{devnull.Fd(), out, errOut},
		Session: launch.NewGroup, RootsPATH: h.root}
	cmd, err := prog.Build()
	if err != nil {
		return launch.ExitCode(err), err
	}
	mark := cgroup.Container.Mark()
	pid, done, err := h.reaper.Start(cmd.Path, cmd.Argv, cmd.Attr, cmd.Signals)
	if w != nil {
		w.Close() // the hook's own copies are the pipe's only writers now
	}
	if err != nil {
		err = prog.StartError(cmd, err)
		return launch.ExitCode(err), mark.StartFailed(err, launch.ExitCode(err))
	}
	if copied != nil {
		defer awaitHookOutput(copied)
	}
	timer := time.NewTimer(hook.Timeout)
	defer timer.Stop()
	for {
		select {
		case st := <-done:
			if st.Signal == 0 && mark.PidsLimited(st.Code, 0, false) {
				// a hook that could not fork fails its own way (sh: "can't fork"): say why
				return st.ExitStatus(), fmt.Errorf("exit status %d, %s", st.Code, cgroup.PidsReason)
			}
			return st.ExitStatus(), nil
		case <-timer.C:
			syscall.Kill(-pid, syscall.SIGKILL)
			<-done
			return 124, fmt.Errorf("timed out after %v", hook.Timeout)
		case sig := <-h.sigs:
			s := sig.(syscall.Signal)
			var why error
			switch {
			case h.beginsShutdown(sig) && !slices.Contains(h.ignoredAtStart, sig):
				why = fmt.Errorf("%w by %s", errInterrupted, signame.Text(s))
			case sig == h.opts.pdeath && h.parentGone(): // it comes once: loop would never see it
				why = fmt.Errorf("%w: hinit's parent died (%s)", errInterrupted, signame.Text(s))
			default: // as in loop: inherited ignored, or nothing to stop
				continue
			}
			syscall.Kill(-pid, syscall.SIGKILL)
			<-done
			return signame.ExitStatus(s), why
		}
	}
}
