package hostile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hinit/hsvc"
	"hinit/internal/testprog"
	"hinit/pid1"
)

// hermes is the hostile user: the image's unprivileged uid.
var hermes = &syscall.Credential{Uid: 10000, Gid: 10000}

// TestMain makes the test binary hinit (HOSTILE_AS=init, with a private
// /proc of its PID namespace, as docker gives) or hsvc (HOSTILE_AS=hsvc).
func TestMain(m *testing.M) {
	switch os.Getenv("HOSTILE_AS") {
	case "init":
		os.Unsetenv("HOSTILE_AS")
		if err := unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
			fmt.Fprintln(os.Stderr, "mount private:", err)
			os.Exit(111)
		}
		if err := unix.Mount("proc", "/proc", "proc", 0, ""); err != nil {
			fmt.Fprintln(os.Stderr, "mount proc:", err)
			os.Exit(111)
		}
		if os.Getenv("HOSTILE_RUN_TMPFS") != "" { // compat: s6-overlay remakes /run/s6
			os.Unsetenv("HOSTILE_RUN_TMPFS")
			if err := unix.Mount("tmpfs", "/run", "tmpfs", 0, "mode=0755"); err != nil {
				fmt.Fprintln(os.Stderr, "mount /run:", err)
				os.Exit(111)
			}
		}
		os.Exit(pid1.Main(os.Args))
	case "hsvc":
		os.Exit(hsvc.Main(os.Args[1:], os.Stdout, os.Stderr))
	case "flood":
		os.Exit(flood(os.Args[1:]))
	case "swap":
		os.Exit(swapLoop(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// needRoot skips a trial that plays root against the hermes user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the trial plays root and the hermes user (uid 10000), in a new PID namespace")
	}
}

// initProc is a hinit running as PID 1 of its own PID namespace, with its
// runtime dir, scandir (hermes-writable, as SPEC §4 says) and config in
// dir, a 0777 temp dir.
type initProc struct {
	t      *testing.T
	dir    string
	cmd    *exec.Cmd
	out    testprog.Buffer // stdout and stderr
	done   chan struct{}
	scan   string
	config string
	bin    string // a copy of the test binary other users may run, once exposeSelf made it
}

// startInit starts hinit with config as hinit.yaml and main as its main
// command, and waits until it answers `hsvc status`.
func startInit(t *testing.T, config string, main ...string) *initProc {
	t.Helper()
	needRoot(t)
	dir, err := os.MkdirTemp("", "hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, unix.Chmod(dir, 0o1777)) // as /run: other users make files here, none renames the scandir
	p := &initProc{t: t, dir: dir, done: make(chan struct{}), scan: filepath.Join(dir, "service"),
		config: filepath.Join(dir, "hinit.yaml")}
	must(t, os.WriteFile(p.config, []byte(config), 0o644))
	must(t, os.Mkdir(p.scan, 0o755))
	must(t, os.Chown(p.scan, int(hermes.Uid), int(hermes.Gid)))
	self, err := os.Executable()
	must(t, err)
	if len(main) == 0 {
		main = []string{"/bin/sleep", "100000"}
	}
	p.cmd = exec.Command(self, append([]string{"--"}, main...)...)
	p.cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOSTILE_AS=init",
		"HINIT_RUNTIME_DIR=" + filepath.Join(dir, "run"), "HINIT_SCANDIR=" + p.scan, "HINIT_CONFIG=" + p.config}
	if strings.Contains(config, "compat: s6-overlay") {
		p.cmd.Env = append(p.cmd.Env, "HOSTILE_RUN_TMPFS=1") // not the host's /run/s6
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	if err := p.cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
			t.Skipf("kernel refuses new PID namespaces here: %v", err)
		}
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("hinit output:\n%s", p.out.String())
		}
	})
	testprog.WaitFor(t, 20*time.Second, "hinit to answer hsvc status", func() bool {
		select {
		case <-p.done:
			t.Fatalf("hinit ended early")
		default:
		}
		code, _, _ := p.hsvc(nil, "status")
		return code == 0
	})
	return p
}

// hsvc runs hsvc against this hinit, as root or as cred, and returns its
// exit code, stdout and stderr.
func (p *initProc) hsvc(cred *syscall.Credential, args ...string) (int, string, string) {
	p.t.Helper()
	self, err := os.Executable()
	must(p.t, err)
	if p.bin != "" {
		self = p.bin
	}
	cmd := exec.Command(self, args...)
	cmd.Env = []string{"HOSTILE_AS=hsvc", "HINIT_RUNTIME_DIR=" + filepath.Join(p.dir, "run")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		p.t.Fatalf("hsvc %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// svcStatus is one row of `hsvc status --json`.
type svcStatus struct {
	Name, State, Reason, Source string
	PID                         int
	LostLines                   uint64 `json:"lost_lines"`
}

// status returns name's row of the full status table; ok is false when the
// table does not list it.
func (p *initProc) status(name string) (svcStatus, bool) {
	p.t.Helper()
	code, out, errOut := p.hsvc(nil, "status", "--json")
	if code != 0 {
		p.t.Fatalf("hsvc status: exit %d: %s", code, errOut)
	}
	var st struct{ Services []svcStatus }
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		p.t.Fatalf("hsvc status --json %q: %v", out, err)
	}
	for _, s := range st.Services {
		if s.Name == name {
			return s, true
		}
	}
	return svcStatus{}, false
}

// asHermes runs a shell script as the hermes user, with args as $1...,
// and fails the trial if it fails: the hostile user's moves must succeed for
// the trial to mean anything.
func asHermes(t *testing.T, script string, args ...string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-ec", script, "sh"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: hermes}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as hermes: %s: %v\n%s", script, err, out)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
