package pid1

import (
	"strings"
	"testing"

	"hinit/config"
)

// FuzzParseFlags: no command line panics parseFlags; an accepted one
// gives an exit map within 0..255, and its command is a suffix-preserving
// pick of the words.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{
		"-g\x00--\x00/entrypoint.sh", "-e\x00143\x00--\x00x", "-e143\x00-p\x00SIGUSR1\x00x",
		"-vvv\x00-sgw\x00x\x00-v", "sleep\x00-v\x001", "--version", "-v\x00--version", "--help",
		"-e", "-p", "-pSIGALRM\x00x", "-", "--", "-l", "-h", "-e\x00-1", "-e\x00256", "-e\x00+1",
		"-x", "--bogus", "x\x00--\x00-v",
	} {
		f.Add(s, true, false, "")
		f.Add(s, false, true, "3")
	}
	f.Fuzz(func(t *testing.T, argv string, asTini, posix bool, verb string) {
		args := strings.Split(argv, "\x00")
		env := func(k string) (string, bool) {
			switch k {
			case "POSIXLY_CORRECT":
				return "", posix
			case "TINI_VERBOSITY", "TINI_SUBREAPER", "TINI_KILL_PROCESS_GROUP":
				return verb, verb != ""
			}
			return "", false
		}
		o, cmd, act, err := parseFlags(args, asTini, env)
		if err != nil {
			if o != nil && act != actRun {
				t.Fatalf("error with action %v", act)
			}
			if strings.ContainsAny(err.Error(), "\n") && !strings.ContainsAny(argv, "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if o == nil {
			t.Fatal("nil options without error")
		}
		if len(cmd) > len(args) {
			t.Fatalf("cmd %q longer than args %q", cmd, args)
		}
		o.readEnv(env)
		for code := -5; code < 300; code++ {
			got := o.exitStatus(config.Main{}, code)
			if got != code && got != 0 {
				t.Fatalf("exitStatus(%d) = %d", code, got)
			}
			if got == 0 && code != 0 && (code < 0 || code > 255) {
				t.Fatalf("-e mapped %d", code)
			}
		}
		if _, err := o.logLevel("", false); err != nil {
			t.Fatal(err)
		}
		if o.pdeath < 0 || o.pdeath > 64 {
			t.Fatalf("pdeath %d", o.pdeath)
		}
	})
}
