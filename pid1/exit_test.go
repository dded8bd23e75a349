package pid1

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hinit/cgroup"
	"hinit/internal/testcg"
	"hinit/internal/testprog"
	"hinit/reaper"
)

// Every exit code 0..255 of main is the container's exit status.
func TestEveryExitCodeOfMain(t *testing.T) {
	var wg sync.WaitGroup
	codes := make(chan int)
	for range 8 {
		wg.Go(func() {
			for code := range codes {
				_, got := runInit(t, initOpts{args: []string{"/bin/sh", "-c", fmt.Sprintf("exit %d", code)}})
				if got != code {
					t.Errorf("main exit %d: container exited %d", code, got)
				}
			}
		})
	}
	for code := range 256 {
		codes <- code
	}
	close(codes)
	wg.Wait()
}

func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	// No "#!" line: the kernel refuses it (ENOEXEC), execvp (tini's exec)
	// runs it with /bin/sh, and so does hinit for main.
	noshebang := filepath.Join(dir, "entry.sh")
	os.WriteFile(noshebang, []byte(`[ "$1" = arg ] && exit 7; exit 1`+"\n"), 0o755)
	// Not scripts: a binary for another machine (an ELF header for
	// aarch64) and an empty file stay exec errors, not /bin/sh's to read.
	foreign, empty := filepath.Join(dir, "app-arm64"), filepath.Join(dir, "app-empty")
	os.WriteFile(foreign, []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00\x01\x00\x00\x00(\n"), 0o755)
	os.WriteFile(empty, nil, 0o755)
	// A payload after the script's first line (a self-extracting
	// archive): bash, dash and execvp run it; the NUL is not on line 1.
	payload := filepath.Join(dir, "selfextract")
	os.WriteFile(payload, []byte("exit 7\n\x00\x01\x02payload"), 0o755)
	tests := []struct {
		name   string
		config string
		args   []string
		want   int
		stderr string
	}{
		{"signal N gives 128+N", "", []string{"/bin/sh", "-c", "kill -USR1 $$"}, 138, ""},
		{"SIGKILL gives 137", "", []string{"/bin/sh", "-c", "kill -KILL $$"}, 137, ""},
		{"remap 143 to 0", "main: {remap_exit: {143: 0}}\n", []string{"/bin/sh", "-c", "kill -TERM $$"}, 0, ""},
		{"remap leaves other codes", "main: {remap_exit: {143: 0}}\n", []string{"/bin/sh", "-c", "exit 3"}, 3, ""},
		{"not found is 127", "", []string{"no-such-command-anywhere"}, 127,
			`hinit: error: main: "no-such-command-anywhere": executable file not found in $PATH`},
		{"not executable is 126", "", []string{noexec}, 126,
			"hinit: error: main: exec " + noexec + ": permission denied"},
		{"a script without #! runs with /bin/sh", "", []string{noshebang, "arg"}, 7, ""},
		{"a script without #! in main.workdir", "main: {workdir: " + dir + "}\n", []string{"./entry.sh", "arg"}, 7, ""},
		{"a script without #! with a payload", "", []string{payload}, 7, ""},
		{"a binary for another machine is 126", "", []string{foreign}, 126, "exec " + foreign + ": exec format error"},
		{"an empty file is 126", "", []string{empty}, 126, "exec " + empty + ": exec format error"},
		{"nothing to run is a usage error", "", nil, 2, "hinit: nothing to run"},
		{"broken config stops the boot", "services:\n  web:\n    comand: [x]\n", []string{"true"}, 1,
			"hinit.yaml:4: services.web.comand: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, got := runInit(t, initOpts{config: tt.config, args: tt.args})
			if got != tt.want {
				t.Errorf("exit status %d, want %d", got, tt.want)
			}
			if tt.stderr != "" && !strings.Contains(p.stderr.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, p.stderr)
			}
		})
	}
}

// A main found on PATH that is not executable exits 126, as SPEC §2 says
// and as under tini (execvp: EACCES) and a shell; it was 127 (not found).
func TestNotExecutableOnPATH(t *testing.T) {
	bin := testprog.PublicDir(t)
	if err := os.WriteFile(filepath.Join(bin, "myapp"), []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, code := runInit(t, initOpts{bare: true, args: []string{"myapp"},
		env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}})
	if code != 126 {
		t.Errorf("exit %d, want 126; stderr %q", code, p.stderr)
	}
	if want := "myapp: permission denied"; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr %q, want %q", p.stderr, want)
	}
}

// Main ended by the kernel's OOM killer exits 137 as any SIGKILL, and
// hinit's log says it ran out of memory. A kill -9 in the same cgroup
// after that OOM kill is a SIGKILL and no more, and so is hinit's own
// SIGKILL at the shutdown's deadline. The memory limit is a real
// cgroup's that hinit and main run in (root only).
func TestMainOutOfMemory(t *testing.T) {
	cg := testcg.Memory(t, 64<<20)
	enter := []string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, cg.Procs()}
	const said = "main exited: killed by SIGKILL, out of memory (the container's cgroup counted an OOM kill)"
	p, code := runInit(t, initOpts{wrap: enter, args: testprog.Command("hog", cg.Procs())})
	if n, _ := cg.OOMKills(); code != 137 || !strings.Contains(p.stderr.String(), said) || n != 1 {
		t.Errorf("hog as main: exit %d, %d OOM kills; want 137, 1 and %q in hinit's log:\n%s", code, n, said, p.stderr)
	}
	p, code = runInit(t, initOpts{wrap: enter, args: []string{"/bin/sh", "-c", "kill -KILL $$"}})
	if code != 137 || strings.Contains(p.stderr.String(), "out of memory") {
		t.Errorf("kill -9 of main: exit %d; want 137 and no word of memory:\n%s", code, p.stderr)
	}
	// A main whose child the OOM killer ended, killed by hinit at the
	// shutdown's deadline: its SIGKILL is hinit's.
	hog := strings.Join(testprog.Command("hog", cg.Procs()), " ")
	p = startInit(t, initOpts{wrap: enter, env: []string{"HINIT_SHUTDOWN_TIMEOUT=200ms"},
		args: []string{"/bin/sh", "-c", "trap '' TERM; HINIT_TESTPROG=1 " + hog + "; echo hogged; exec sleep 100"}})
	p.waitOutput("hogged", false)
	p.signal(syscall.SIGTERM)
	if code := p.wait(15 * time.Second); code != 137 || strings.Contains(p.stderr.String(), "out of memory") {
		t.Errorf("main killed at the deadline after its child's OOM kill: exit %d; want 137 and no word of memory:\n%s", code, p.stderr)
	}
	if n, _ := cg.OOMKills(); n != 2 {
		t.Errorf("%d OOM kills counted, want 2 (main's child's)", n)
	}
}

// What hinit's log says of main's death, from the container cgroup's
// counts: an OOM kill, a non-zero exit while the pids limit refused a
// task; a death by another signal (perhaps one hinit forwarded) or an
// exit 0 is not put down to the pids limit.
func TestMainDeathCause(t *testing.T) {
	var oom, pids uint64
	counts := cgroup.Counts{OOMKills: func() (uint64, bool) { return oom, true }, PidsRefusals: func() (uint64, bool) { return pids, true }}
	m := &mainProc{mark: counts.Mark()}
	oom, pids = 1, 1
	for st, want := range map[reaper.Status]string{
		{Signal: syscall.SIGKILL}: "killed by SIGKILL, out of memory (the container's cgroup counted an OOM kill)",
		{Code: 2}:                 "exit 2, the container's pids limit refused a new process or thread meanwhile",
		{Signal: syscall.SIGTERM}: "",
		{Code: 0}:                 "",
	} {
		if got := m.deathCause(st, false); got != want {
			t.Errorf("deathCause(%+v) = %q, want %q", st, got, want)
		}
	}
	if got := m.deathCause(reaper.Status{Code: 1}, true); got != "" {
		t.Errorf("deathCause of exit 1 during the shutdown = %q, want nothing", got)
	}
	m.killed.Store(true)
	if got := m.deathCause(reaper.Status{Signal: syscall.SIGKILL}, true); got != "" {
		t.Errorf("deathCause of hinit's own SIGKILL = %q, want nothing", got)
	}
}
