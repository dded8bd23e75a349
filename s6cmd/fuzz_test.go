package s6cmd

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzArgv runs s6-svc, s6-svstat, s6-svscanctl and s6-svwait on fuzzed
// argv against a socket nobody listens on: nothing panics or hangs, and
// the exit code is one of s6's.
func FuzzArgv(f *testing.F) {
	for _, s := range []string{
		"-wU\x00-T\x00300\x00-u\x00.", "-r\x00.", "-T0\x00-wu\x00.", "-wuT1\x00.", "-\x00.", "--\x00-d",
		"-o\x00up,signal,signum,pid\x00.", "-u\x00-t\x000\x00.\x00..", "-a\x00.", "-T\x0099999999999\x00.",
		"-abqhkti12pcyroduDUxOQ\x00.", "-w", "-t", "-o", "",
	} {
		for p := range 4 {
			f.Add(uint8(p), s)
		}
	}
	progs := []string{"s6-svc", "s6-svstat", "s6-svscanctl", "s6-svwait"}
	f.Fuzz(func(t *testing.T, p uint8, argv string) {
		args := strings.Split(argv, "\x00")
		dir := t.TempDir()
		for i, a := range args { // keep the fuzzer inside its own dir
			if a != "" && !strings.HasPrefix(a, "-") {
				args[i] = filepath.Join(dir, filepath.Base(a))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		name := progs[int(p)%len(progs)]
		e := &env{prog: name, ctx: ctx, stdout: io.Discard, stderr: io.Discard,
			sock: filepath.Join(dir, "no.sock"), now: time.Now}
		done := make(chan int, 1)
		go func() { done <- commands[name](e, args) }()
		select {
		case code := <-done:
			if !slices.Contains([]int{0, 1, 99, 100, 111}, code) {
				t.Fatalf("%s %q: exit %d", name, args, code)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %q: hangs", name, args)
		}
	})
}

// FuzzGetopt: getopt never panics; operands are a suffix of args, and
// every option letter is one it was given.
func FuzzGetopt(f *testing.F) {
	f.Add("-wU\x00-T\x00300\x00-ud\x00x", "ud", "wT")
	f.Add("-T", "ud", "wT")
	f.Add("--\x00-x", "x", "")
	f.Fuzz(func(t *testing.T, argv, flags, withValue string) {
		args := strings.Split(argv, "\x00")
		opts, rest, ok := getopt(args, flags, withValue)
		if !ok {
			return
		}
		if len(rest) > len(args) || !slices.Equal(rest, args[len(args)-len(rest):]) {
			t.Fatalf("operands %q not a suffix of %q", rest, args)
		}
		for _, o := range opts {
			if strings.IndexByte(flags+withValue, o.c) < 0 {
				t.Fatalf("option %q not asked for", o.c)
			}
		}
	})
}
