package launch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"hinit/account"
	"hinit/internal/testprog"
)

// The precedence: container, then the account's HOME/USER/LOGNAME, then
// the definition's own env:, which wins.
func TestEnviron(t *testing.T) {
	container := map[string]string{"HOME": "/c", "USER": "c", "A": "1", "B": "1"}
	acct := &account.Account{Name: "hermes", Home: "/opt/data"}
	own := map[string]string{"HOME": "/x", "B": "2"}
	got := EnvList(Environ(container, acct, own))
	want := []string{"A=1", "B=2", "HOME=/x", "LOGNAME=hermes", "USER=hermes"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %v, want %v", got, want)
	}
	if got := EnvList(Environ(container, nil, nil)); !slices.Equal(got, []string{"A=1", "B=1", "HOME=/c", "USER=c"}) {
		t.Errorf("Environ without an account = %v", got)
	}
	if container["HOME"] != "/c" || len(container) != 4 {
		t.Errorf("container environment modified: %v", container)
	}
}

func TestBuild(t *testing.T) {
	dir := testprog.PublicDir(t) // the account's home: it looks at it as itself
	exe := filepath.Join(dir, "prog")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": dir}
	home := &account.Account{UID: 10000, GID: 10000, Groups: []int{10000, 44}, Name: "hermes", Home: dir}

	cmd, err := Program{Argv: []string{"prog", "x"}, Env: env, User: home, Switch: true, InHome: true}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sys := cmd.Attr.Sys
	if cmd.Path != exe || cmd.Attr.Dir != dir || !sys.Setsid || sys.Credential.Uid != 10000 || len(sys.Credential.Groups) != 2 {
		t.Errorf("service: %+v, sys %+v", cmd, sys)
	}
	cmd, err = Program{Argv: []string{"prog"}, Env: env, User: home, Session: Foreground}.Build()
	if err != nil || cmd.Attr.Dir != "" || !cmd.Attr.Sys.Foreground || !cmd.Attr.Sys.Setpgid || cmd.Attr.Sys.Credential != nil {
		t.Errorf("main with a terminal: %+v %v", cmd, err)
	}
	gone := &account.Account{Name: "x", Home: filepath.Join(dir, "none")}
	if cmd, err := (Program{Argv: []string{"prog"}, Env: env, User: gone, InHome: true}).Build(); err != nil || cmd.Attr.Dir != "/" {
		t.Errorf("missing home: %+v %v, want dir /", cmd, err)
	}

	tests := []struct {
		name string
		prog Program
		code int
		msg  string
	}{
		{"not on PATH", Program{Argv: []string{"nope"}, Env: env}, 127, `"nope": executable file not found in $PATH`},
		{"no workdir", Program{Argv: []string{"prog"}, Env: env, Workdir: filepath.Join(dir, "none")}, 126,
			"workdir " + filepath.Join(dir, "none") + ": no such file or directory"},
		{"workdir is a file", Program{Argv: []string{"prog"}, Env: env, Workdir: exe}, 126, "workdir " + exe + ": not a directory"},
	}
	for _, tc := range tests {
		_, err := tc.prog.Build()
		if err == nil || err.Error() != tc.msg || ExitCode(err) != tc.code {
			t.Errorf("%s: %v (exit %d), want %q and %d", tc.name, err, ExitCode(err), tc.msg, tc.code)
		}
	}
	if !errors.Is(func() error { _, err := LookPath("nope", env); return err }(), ErrNotFound) {
		t.Error("LookPath of a missing command does not match ErrNotFound")
	}
}

// A workdir is looked at with the rights of the user the program runs as:
// the hermes user names it in a service.yaml, and root's stat told it, in
// hsvc status, whether a path in a dir it may not search was missing, a
// file or a dir. Now it gets what it could see itself. Root's own program
// still gets the reason.
func TestWorkdirLookedAtAsItsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the workdir is looked at as another user")
	}
	private := t.TempDir() // 0700, root's
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(private, "file"), nil, 0o600))
	must(os.Mkdir(filepath.Join(private, "dir"), 0o755))
	hermes := &account.Account{UID: 10000, GID: 10000, Name: "hermes", Home: "/"}
	env := map[string]string{"PATH": "/usr/bin:/bin"}
	for _, name := range []string{"file", "missing", "dir"} {
		wd := filepath.Join(private, name)
		_, err := Program{Argv: []string{"true"}, Env: env, User: hermes, Switch: true, Workdir: wd}.Build()
		if want := "workdir " + wd + ": permission denied"; err == nil || err.Error() != want || ExitCode(err) != 126 {
			t.Errorf("hermes' workdir %s: %v (exit %d), want %q and 126", name, err, ExitCode(err), want)
		}
	}
	_, err := Program{Argv: []string{"true"}, Env: env, Workdir: filepath.Join(private, "missing")}.Build()
	if want := "workdir " + filepath.Join(private, "missing") + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("root's missing workdir: %v, want %q", err, want)
	}
}

// A program root runs from a definition (RootsPATH) is looked up in, and
// gets, the PATH dirs only root can change: the hermes image's PATH holds
// a dir of the hermes user's volume ahead of /usr/bin.
func TestBuildRootsPATH(t *testing.T) {
	userBin, rootBin := testprog.PathDirs(t, map[string]string{"user/prog": "user", "root/prog": "root", "user/planted": "planted"})
	base := filepath.Dir(rootBin)
	env := map[string]string{"PATH": userBin + ":" + rootBin}
	cmd, err := Program{Argv: []string{"prog"}, Env: env, RootsPATH: true}.Build()
	if err != nil || cmd.Path != rootBin+"/prog" || !slices.Contains(cmd.Attr.Env, "PATH="+rootBin) {
		t.Errorf("as root: %+v, %v; want %s/prog, and PATH=%s", cmd, err, rootBin, rootBin)
	}
	cmd, err = Program{Argv: []string{"prog"}, Env: env}.Build()
	if err != nil || cmd.Path != userBin+"/prog" || !slices.Contains(cmd.Attr.Env, "PATH="+env["PATH"]) {
		t.Errorf("main: %+v, %v; want %s/prog and the whole PATH", cmd, err, userBin)
	}
	_, err = Program{Argv: []string{"planted"}, Env: env, RootsPATH: true}.Build()
	if want := `"planted": executable file not found in $PATH (` + userBin + ` has it, but is left out of root's PATH: uid 10000 can change ` + userBin + `)`; err == nil || err.Error() != want || ExitCode(err) != 127 {
		t.Errorf("only in the user's dir: %v (exit %d), want %q and 127", err, ExitCode(err), want)
	}
	// In root's dir, a file of the user's, or root's link to one, is
	// passed over: the next dir's runs.
	otherRoot := filepath.Join(base, "other")
	if err := os.Mkdir(otherRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{rootBin + "/theirs", otherRoot + "/theirs", otherRoot + "/linked"} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(rootBin+"/theirs", 10000, 10000); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(userBin+"/planted", rootBin+"/linked"); err != nil {
		t.Fatal(err)
	}
	two := map[string]string{"PATH": rootBin + ":" + otherRoot}
	for _, name := range []string{"theirs", "linked"} {
		if cmd, err := (Program{Argv: []string{name}, Env: two, RootsPATH: true}).Build(); err != nil || cmd.Path != otherRoot+"/"+name {
			t.Errorf("%s: %+v, %v; want %s/%s", name, cmd, err, otherRoot, name)
		}
	}
	_, err = Program{Argv: []string{"theirs"}, Env: map[string]string{"PATH": rootBin}, RootsPATH: true}.Build()
	if want := `"theirs": executable file not found in $PATH (` + rootBin + `/theirs passed over, not root's only: uid 10000 can change ` + rootBin + `/theirs)`; err == nil || err.Error() != want {
		t.Errorf("only the user's file in root's dir: %v, want %q", err, want)
	}
	// A link of root's in root's dir whose target's path the user can
	// change is passed over too.
	hop := filepath.Join(userBin, "hop")
	if err := os.Symlink("/bin/true", hop); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(hop, rootBin+"/hopped"); err != nil {
		t.Fatal(err)
	}
	if _, err := (Program{Argv: []string{"hopped"}, Env: map[string]string{"PATH": rootBin}, RootsPATH: true}).Build(); err == nil || !strings.Contains(err.Error(), "uid 10000") {
		t.Errorf("root's link through the user's link to /bin/true: %v, want it passed over", err)
	}
	// No PATH, or nothing of it root's only: root's default dirs, never
	// an empty or missing PATH, which a shell reads as the working dir.
	cmd, err = Program{Argv: []string{"true"}, Env: map[string]string{}, RootsPATH: true}.Build()
	if err != nil || !slices.ContainsFunc(cmd.Attr.Env, func(e string) bool { return strings.HasPrefix(e, "PATH=/") }) {
		t.Errorf("no PATH: %+v, %v; want true found, and root's default dirs", cmd, err)
	}
	cmd, err = Program{Argv: []string{"/bin/true"}, Env: map[string]string{"PATH": userBin}, RootsPATH: true}.Build()
	if err != nil || !slices.ContainsFunc(cmd.Attr.Env, func(e string) bool {
		return strings.HasPrefix(e, "PATH=") && strings.Contains(e+":", ":/usr/bin:") && !strings.Contains(e, userBin)
	}) {
		t.Errorf("a PATH of the user's dir only: %+v, %v; want root's default dirs", cmd, err)
	}
	if env["PATH"] != userBin+":"+rootBin {
		t.Errorf("the caller's environment changed: PATH=%s", env["PATH"])
	}
}

// StartError blames a working dir the program cannot enter, also for a
// program without an account of its own (main of a non-root hinit): that
// used to dereference the nil account and panic PID 1.
func TestStartErrorWithoutUser(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone")
	p := Program{Argv: []string{"/bin/true"}, Workdir: gone}
	cmd := &Cmd{Path: "/bin/true", Argv: p.Argv, Attr: &syscall.ProcAttr{Dir: gone}}
	err := p.StartError(cmd, syscall.ENOENT)
	want := "workdir " + gone + ": hinit's own user cannot enter it: no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("StartError = %v, want %q", err, want)
	}
	if code := ExitCode(err); code != 127 {
		t.Errorf("ExitCode = %d, want 127", code)
	}
}
