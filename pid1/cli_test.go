package pid1

import (
	"bytes"
	"fmt"
	"log/slog"
	"syscall"

	"hinit/config"
	"hinit/control"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("services:\n  web: {command: [sleep, '1']}\n"), 0o644)
	os.WriteFile(bad, []byte("services:\n  web:\n    command: [sleep]\n    backoff: {initial: soon}\n"), 0o644)
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"good file", []string{good}, 0, good + ": ok\n", ""},
		{"bad duration with file and line", []string{bad}, 1, "", bad + ":4: "},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, 1, "", "no such file"},
		{"too many arguments", []string{good, bad}, 2, "", "usage"},
		{"an option", []string{"-q"}, 2, "", "usage"},
		{"help", []string{"--help"}, 0, "usage: hinit check-config [FILE]: check FILE (default $HINIT_CONFIG or /etc/hinit/hinit.yaml) and its hinit.d drop-ins\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := checkConfig(tt.args, &out, &errb)
			if code != tt.code || out.String() != tt.out || !strings.Contains(errb.String(), tt.err) {
				t.Errorf("check-config %v = %d, %q, %q; want %d, %q, containing %q",
					tt.args, code, out.String(), errb.String(), tt.code, tt.out, tt.err)
			}
		})
	}
}

// check-config with no FILE and no hinit.yaml says what boot does then (it
// runs bare), exit 0; a FILE named that is missing is an error.
func TestCheckConfigNoFile(t *testing.T) {
	if _, err := os.Stat(control.DefaultConfig); err == nil {
		t.Skipf("%s exists here", control.DefaultConfig)
	}
	for _, k := range []string{control.ConfigEnv, control.RuntimeDirEnv, control.ScandirEnv} {
		t.Setenv(k, "")
	}
	var out, errb bytes.Buffer
	want := control.DefaultConfig + ": none; hinit runs bare, as tini does (docs/tini.md)\n"
	if code := checkConfig(nil, &out, &errb); code != 0 || out.String() != want || errb.String() != "" {
		t.Errorf("check-config = %d, %q, %q; want 0, %q", code, out.String(), errb.String(), want)
	}
	out.Reset()
	if code := checkConfig([]string{control.DefaultConfig}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "no such file") {
		t.Errorf("check-config %s = %d, %q, %q; want 1, no such file", control.DefaultConfig, code, out.String(), errb.String())
	}
}

// check-config validates hinit.yaml with its hinit.d drop-ins: each file
// it read is named ok, and a service defined twice names both places.
func TestCheckConfigDropIns(t *testing.T) {
	dir := t.TempDir()
	main, dropIn := filepath.Join(dir, "hinit.yaml"), filepath.Join(dir, "hinit.d", "50-extra.yaml")
	os.Mkdir(filepath.Join(dir, "hinit.d"), 0o755)
	os.WriteFile(main, []byte("services:\n  web: {command: [sleep, '1']}\n"), 0o644)
	os.WriteFile(dropIn, []byte("services:\n  extra: {command: [sleep, '1']}\n"), 0o644)
	var out, errb bytes.Buffer
	if code := checkConfig([]string{main}, &out, &errb); code != 0 || out.String() != main+": ok\n"+dropIn+": ok\n" {
		t.Errorf("check-config = %d, %q, %q; want 0 and both files ok", code, out.String(), errb.String())
	}
	os.WriteFile(dropIn, []byte("services:\n  web: {command: [sleep, '2']}\n"), 0o644)
	out.Reset()
	want := dropIn + ":2: services.web: defined twice (first at " + main + ":2)\n"
	errb.Reset()
	if code := checkConfig([]string{main}, &out, &errb); code != 1 || errb.String() != want {
		t.Errorf("check-config = %d, %q; want 1, %q", code, errb.String(), want)
	}
}

// TestParseFlags: tini's command line, read as tini reads it (GNU getopt:
// options anywhere before "--" unless POSIXLY_CORRECT) and as hinit reads
// it (options end at the first word that is not one).
func TestParseFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		gnu    bool
		posix  bool
		cmd    []string
		act    action
		errSub string
		check  func(*options) bool
	}{
		{"old hermes entrypoint", []string{"-g", "--", "hermes", "-g"}, true, false, []string{"hermes", "-g"}, actRun, "",
			func(o *options) bool { return o.group }},
		{"clustered and valued", []string{"-sgvv", "-e143", "-e", "0", "-p", "SIGUSR1", "--", "x"}, true, false, []string{"x"}, actRun, "",
			func(o *options) bool {
				return o.subreaper && o.group && o.verbose == 2 && o.expect[143] && o.expect[0] && !o.expect[1] && o.pdeath == syscall.SIGUSR1
			}},
		{"tini permutes", []string{"sleep", "-w", "1"}, true, false, []string{"sleep", "1"}, actRun, "",
			func(o *options) bool { return o.warnReap }},
		{"tini with POSIXLY_CORRECT stops", []string{"sleep", "-w", "1"}, true, true, []string{"sleep", "-w", "1"}, actRun, "", nil},
		{"hinit stops at the command", []string{"-v", "sleep", "-w", "1"}, false, false, []string{"sleep", "-w", "1"}, actRun, "",
			func(o *options) bool { return o.verbose == 1 && !o.warnReap }},
		{"tini rejects an option of the command", []string{"sleep", "-x"}, true, false, nil, actRun, "unknown option -x", nil},
		{"unknown long option", []string{"--bogus"}, false, false, nil, actRun, "unknown option --bogus", nil},
		{"-e out of range", []string{"-e", "256", "--", "x"}, true, false, nil, actRun, "-e 256", nil},
		// -e as tini's strtol reads it (Debian's tini 0.19 takes each of these).
		{"-e with leading blanks and signs", []string{"-e", " 7", "-e", "\t+8", "-e", "09", "-e", "-0", "--", "x"}, true, false, []string{"x"}, actRun, "",
			func(o *options) bool { return o.expect[7] && o.expect[8] && o.expect[9] && o.expect[0] && !o.expect[1] }},
		{"-e empty is 0", []string{"-e", "", "--", "x"}, true, false, []string{"x"}, actRun, "",
			func(o *options) bool { return o.expect[0] && !o.expect[1] }},
		// ...and refuses each of these.
		{"-e blank", []string{"-e", " ", "--", "x"}, true, false, nil, actRun, "-e  : want an exit code", nil},
		{"-e sign alone", []string{"-e", "+", "--", "x"}, true, false, nil, actRun, "-e +: want an exit code", nil},
		{"-e trailing blank", []string{"-e", "7 ", "--", "x"}, true, false, nil, actRun, "-e 7 : want an exit code", nil},
		{"-e hex", []string{"-e", "0x1", "--", "x"}, true, false, nil, actRun, "-e 0x1: want an exit code", nil},
		{"-e negative", []string{"-e", "-1", "--", "x"}, true, false, nil, actRun, "-e -1: want an exit code", nil},
		{"-e past long", []string{"-e", "99999999999999999999", "--", "x"}, true, false, nil, actRun, "-e 99999999999999999999: want", nil},
		{"-p wants SIG names", []string{"-p", "USR1", "--", "x"}, true, false, nil, actRun, "-p USR1", nil},
		{"-p without a value", []string{"-p"}, true, false, nil, actRun, "needs a value", nil},
		{"-p SIGALRM is the shutdown alarm's", []string{"-p", "SIGALRM", "--", "x"}, true, false, nil, actRun, "-p SIGALRM: hinit's shutdown deadline is its alarm", nil},
		{"-p SIGPROF is the runtime's", []string{"-p", "SIGPROF", "--", "x"}, true, false, nil, actRun, "-p SIGPROF: the Go runtime keeps SIGPROF", nil},
		{"help", []string{"-h"}, true, false, nil, actHelp, "", nil},
		{"version", []string{"--version"}, false, false, nil, actVersion, "", nil},
		{"tini's version alone", []string{"--version"}, true, false, nil, actVersion, "", nil},
		{"tini's version not alone", []string{"-v", "--version"}, true, false, nil, actRun, "unknown option --version", nil},
		{"tini's version after the command", []string{"myapp", "--version"}, true, false, nil, actRun, "unknown option --version", nil},
		{"hinit's version after -v", []string{"-v", "--version"}, false, false, nil, actVersion, "", nil},
		{"license", []string{"-l"}, true, false, nil, actLicense, "", nil},
		{"nothing", nil, false, false, nil, actRun, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := func(k string) (string, bool) {
				return "", k == "POSIXLY_CORRECT" && tt.posix // set, empty: glibc's getopt counts it
			}
			o, cmd, act, err := parseFlags(tt.args, tt.gnu, env)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("err = %v, want one containing %q", err, tt.errSub)
				}
				return
			}
			if err != nil || act != tt.act || !slices.Equal(cmd, tt.cmd) {
				t.Fatalf("parseFlags(%q) = %q, %v, %v; want %q, %v", tt.args, cmd, act, err, tt.cmd, tt.act)
			}
			if tt.check != nil && !tt.check(o) {
				t.Errorf("options %+v", *o)
			}
		})
	}
}

// TestExitStatusMapping: -e and main.remap_exit compose (docs/tini.md).
func TestExitStatusMapping(t *testing.T) {
	o := &options{}
	o.expect[143], o.expect[3] = true, true
	m := config.Main{RemapExit: map[int]int{143: 5, 2: 9}}
	for code, want := range map[int]int{143: 0, 3: 0, 2: 9, 1: 1, 0: 0, 255: 255} {
		if got := o.exitStatus(m, code); got != want {
			t.Errorf("exitStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

// TestTiniVerbosity: TINI_VERBOSITY is read with atoi, as tini does
// (Debian's tini 0.19: "3x" and " 2" are levels, "x" is 0, -1 its highest).
func TestTiniVerbosity(t *testing.T) {
	for v, want := range map[string]int{"2": 2, "3x": 3, " 2": 2, "+1": 1, "x": 0, "": 0, "-1": 3, "99": 3, "99999999999999999999": 3} {
		var o options
		o.readEnv(func(k string) (string, bool) { return v, k == "TINI_VERBOSITY" })
		if o.tiniLevel == nil {
			t.Errorf("TINI_VERBOSITY=%q: not read", v)
		} else if *o.tiniLevel != want {
			t.Errorf("TINI_VERBOSITY=%q: level %d, want %d", v, *o.tiniLevel, want)
		}
	}
}

// TestLogLevel: HINIT_LOG_LEVEL, else TINI_VERBOSITY, else the mode's
// default raised by -v.
func TestLogLevel(t *testing.T) {
	n := func(i int) *int { return &i }
	tests := []struct {
		name  string
		o     options
		hinit string
		bare  bool
		want  slog.Level
	}{
		{"bare is silent", options{}, "", true, slog.LevelWarn},
		{"configured says info", options{}, "", false, slog.LevelInfo},
		{"bare -v", options{verbose: 1}, "", true, slog.LevelInfo},
		{"bare -vv", options{verbose: 2}, "", true, slog.LevelDebug},
		{"TINI_VERBOSITY=0", options{tiniLevel: n(0), verbose: 3}, "", false, slog.LevelError},
		{"TINI_VERBOSITY=3", options{tiniLevel: n(3)}, "", true, slog.LevelDebug},
		{"HINIT_LOG_LEVEL wins", options{tiniLevel: n(3)}, "error", true, slog.LevelError},
	}
	for _, tt := range tests {
		if got, err := tt.o.logLevel(tt.hinit, tt.bare); err != nil || got != tt.want {
			t.Errorf("%s: level %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

// check-config prints every problem, for a person to fix the file in one
// pass; hinit's boot prints about errcap.Max bytes of them (PID 1's output
// stays bounded) and the true count of the others. Before, both printed
// 16 at most per file, and the count left out the others: 20 unknown keys
// gave a few lines and "and 10 more problems" where 14 were left out.
func TestConfigProblemsAllOrCounted(t *testing.T) {
	var cfg strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&cfg, "k%02d: 1\n", i)
	}
	problems := func(file string) []string {
		var l []string
		for i := 1; i <= 20; i++ {
			l = append(l, fmt.Sprintf("%s:%d: k%02d: unknown key (expected one of user, main, services, templates, boot, reconcile, services_max, shutdown_timeout, env, compat)", file, i, i))
		}
		return l
	}

	file := filepath.Join(t.TempDir(), "hinit.yaml")
	if err := os.WriteFile(file, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	want := strings.Join(problems(file), "\n") + "\n"
	if code := checkConfig([]string{file}, &out, &errb); code != 1 || out.String() != "" || errb.String() != want {
		t.Errorf("check-config = %d, %q, stderr:\n%s\nwant 1, \"\", stderr:\n%s", code, out.String(), errb.String(), want)
	}

	p, code := runInit(t, initOpts{config: cfg.String(), noTestEn: true, notPID1: true, args: []string{"true"}})
	lines := strings.Split(strings.TrimSuffix(p.stderr.String(), "\n"), "\n")
	shown := len(lines) - 1
	var wantBoot []string
	for _, l := range problems(filepath.Join(p.dir, "hinit.yaml"))[:max(shown, 1)] {
		wantBoot = append(wantBoot, "hinit: "+l)
	}
	wantBoot = append(wantBoot, fmt.Sprintf("hinit: and %d more problems", 20-shown))
	if code != 1 || shown < 1 || p.stderr.String() != strings.Join(wantBoot, "\n")+"\n" {
		t.Errorf("boot = %d, stderr:\n%s\nwant 1, stderr:\n%s", code, p.stderr, strings.Join(wantBoot, "\n"))
	}
	if n := len(p.stderr.String()); n > 1200 {
		t.Errorf("boot printed %d bytes of problems, want about 1 KiB", n)
	}
}

// hinit chown-tree: what the setup hook calls (docker/hermes-setup.sh):
// UID:GID for what is not theirs, -from-uid N for what N owns (the owner
// only; a file with other hard links too: every link is N's), a refusal
// line on stdout for a file with other hard links (its path quoted when a
// newline in it would forge another line), 2 for a bad command line.
func TestChownTreeVerb(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := t.TempDir()
	for _, err := range []error{os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755),
		os.WriteFile(filepath.Join(dir, "a", "b", "f"), nil, 0o644), os.WriteFile(filepath.Join(dir, "h"), nil, 0o644)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "h"), filepath.Join(dir, "a", "h2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "h"), filepath.Join(dir, "a", "x\nrefusing to change y")); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) string {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, p), &st); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
	}
	var out, errb bytes.Buffer
	if code := chownTree([]string{"10000:10001", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := []string{"refusing to change " + filepath.Join(dir, "a", "h2") + ": it has other hard links",
		"refusing to change " + filepath.Join(dir, "h") + ": it has other hard links",
		"refusing to change " + strconv.Quote(filepath.Join(dir, "a", "x\nrefusing to change y")) + ": it has other hard links"}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("stdout %q, want %q", got, want)
	}
	for p, w := range map[string]string{"": "10000:10001", "a/b/f": "10000:10001", "h": "0:0"} {
		if o := owner(p); o != w {
			t.Errorf("%q: owner %s, want %s", p, o, w)
		}
	}
	if code := chownTree([]string{"-xdev", "-from-uid", "10000", "1234", dir}, &out, &errb); code != 0 {
		t.Fatalf("-from-uid: exit %d: %s", code, errb.String())
	}
	if o := owner("a/b/f"); o != "1234:10001" {
		t.Errorf("-from-uid: owner %s, want 1234:10001 (the group kept)", o)
	}
	if err := os.Chown(filepath.Join(dir, "h"), 10000, 0); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := chownTree([]string{"-from-uid", "10000", "1234", dir}, &out, &errb); code != 0 || owner("a/h2") != "1234:0" || out.Len() != 0 {
		t.Errorf("-from-uid, a file of uid 10000 with other links: exit %d, owner %s, stdout %q; want 0, 1234:0, nothing", code, owner("a/h2"), out.String())
	}
	if code := chownTree([]string{"-top", "77:77", filepath.Join(dir, "a")}, &out, &errb); code != 0 || owner("a") != "77:77" || owner("a/b") != "1234:10001" {
		t.Errorf("-top: exit %d, a %s, a/b %s; want 0, 77:77, 1234:10001 (not gone into)", code, owner("a"), owner("a/b"))
	}
	for _, args := range [][]string{{"5", dir}, {"-from-uid", "x", "5", dir}, {"-bogus", "5:5", dir}, {"5:5"}, {"-5:5", dir}} {
		if code := chownTree(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code := chownTree([]string{"5:5", filepath.Join(dir, "none")}, &out, &errb); code != 1 {
		t.Errorf("a missing dir: exit %d, want 1", code)
	}
}

// hinit chown-tree -from-root: what root owns, and the owner's own entries
// in another group, become UID:GID's; another user's file is left, and
// another user's dir is not gone into, though it holds root's file (the
// tree's owner may have moved both there); stdout says how many were left.
func TestChownTreeFromRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := t.TempDir()
	mk := func(p string, isDir bool, uid, gid int) {
		p = filepath.Join(dir, p)
		var err error
		if isDir {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, nil, 0o600)
		}
		if err == nil {
			err = os.Lchown(p, uid, gid)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	mk("rooty", false, 0, 0)
	mk("regroup", false, 10000, 55)
	mk("host", true, 1000, 1000)
	mk("host/rooty", false, 0, 0)
	mk("hostfile", false, 1000, 1000)
	mk("sub", true, 0, 0)
	mk("sub/rooty", false, 0, 0)
	if err := os.Chown(dir, 10000, 10000); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := chownTree([]string{"-from-root", "10000:10000", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for p, want := range map[string]string{"rooty": "10000:10000", "regroup": "10000:10000", "sub": "10000:10000", "sub/rooty": "10000:10000",
		"host": "1000:1000", "host/rooty": "0:0", "hostfile": "1000:1000"} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, p), &st); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%d:%d", st.Uid, st.Gid); got != want {
			t.Errorf("%s: owner %s, want %s", p, got, want)
		}
	}
	if want := "left 2 entries of other users than root and 10000 in " + dir + " as they are, and did not go into their dirs\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	for _, args := range [][]string{{"-from-root", "5", dir}, {"-from-root", "-from-uid", "3", "5:5", dir}} {
		if code := chownTree(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

// TestChownTreeFile: a PATH that is no dir is that file alone, judged and
// changed through its own descriptor (the setup hook's top-level files,
// whose names a hermes process may swap between a stat and a chown of the
// path); with -from-root another user's file is left, said on stdout, and
// a file with other hard links is refused.
func TestChownTreeFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name       string
		uid, gid   int
		links      bool
		args       []string
		want, sout string
	}{
		{"rooty", 0, 0, false, []string{"-from-root", "10000:10000"}, "10000:10000", ""},
		{"regroup", 10000, 55, false, []string{"-from-root", "10000:10000"}, "10000:10000", ""},
		{"hostfile", 1000, 1000, false, []string{"-from-root", "10000:10000"}, "1000:1000", "left DIR/hostfile as it is: uid 1000's, not root's nor 10000's (10000 may have moved it there; give it to 10000 where it comes from)\n"},
		{"anyone", 1000, 1000, false, []string{"10000:10000"}, "10000:10000", ""},
		{"linked", 0, 0, true, []string{"-from-root", "10000:10000"}, "0:0", "refusing to change DIR/linked: it has other hard links\n"},
	} {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(p, tt.uid, tt.gid); err != nil {
			t.Fatal(err)
		}
		if tt.links {
			if err := os.Link(p, p+".2"); err != nil {
				t.Fatal(err)
			}
		}
		var out, errb bytes.Buffer
		if code := chownTree(append(tt.args, p), &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.name, code, errb.String())
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%d:%d", st.Uid, st.Gid); got != tt.want {
			t.Errorf("%s: owner %s, want %s", tt.name, got, tt.want)
		}
		if want := strings.ReplaceAll(tt.sout, "DIR", dir); out.String() != want {
			t.Errorf("%s: stdout %q, want %q", tt.name, out.String(), want)
		}
	}
}

// Entries with other hard links are named up to maxRefusedLines, the rest
// counted in one line: the tree's owner may link a file of its own a
// million times, a line each to docker logs at every boot.
func TestChownTreeRefusalsBounded(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 99 {
		if err := os.Link(filepath.Join(dir, "f"), filepath.Join(dir, fmt.Sprint("l", i))); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := chownTree([]string{"10000:10000", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if want := fmt.Sprintf("refusing to change 80 more entries with other hard links in %s", dir); len(lines) != maxRefusedLines+1 || lines[maxRefusedLines] != want {
		t.Errorf("%d lines, the last %q; want %d, %q", len(lines), lines[len(lines)-1], maxRefusedLines+1, want)
	}
}
