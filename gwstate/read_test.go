package gwstate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadDesired(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string
		err     error
	}{
		{"desired wins", `{"gateway_state":"running","desired_state":"stopped"}`, "stopped", nil},
		{"gateway_state only", `{"gateway_state":"startup_failed"}`, "startup_failed", nil},
		{"running", `{"gateway_state":"running"}`, "running", nil},
		{"draining counts as running", `{"gateway_state":"draining"}`, "running", nil},
		{"degraded counts as running", `{"gateway_state":"degraded"}`, "running", nil},
		{"null desired falls back", `{"desired_state":null,"gateway_state":"stopped"}`, "stopped", nil},
		// As hermes' container_boot: a desired_state there is taken as it
		// stands, and only "running" starts.
		{"empty desired is one", `{"desired_state":"","gateway_state":"running"}`, "", nil},
		{"draining desired is not running", `{"desired_state":"draining","gateway_state":"running"}`, "draining", nil},
		{"hermes record", `{"pid":42,"kind":"hermes-gateway","argv":["hermes"],"gateway_state":"running","platforms":{},"updated_at":"2026-05-21T06:18:05+00:00"}`, "running", nil},
		{"pretty printed", "{\n  \"gateway_state\": \"stopped\"\n}\n", "stopped", nil},
		{"byte order mark (hermes reads utf-8-sig)", "\xef\xbb\xbf{\"gateway_state\":\"stopped\",\"desired_state\":\"running\"}\r\n", "running", nil},
		{"two byte order marks", "\xef\xbb\xbf\xef\xbb\xbf{\"gateway_state\":\"running\"}", "", ErrCorrupt},
		{"neither field", `{"pid":1}`, "", ErrNoState},
		{"empty object", `{}`, "", ErrNoState},
		{"empty file", ``, "", ErrCorrupt},
		{"truncated", `{"gateway_state":"runn`, "", ErrCorrupt},
		{"array", `["running"]`, "", ErrCorrupt},
		{"null", `null`, "", ErrCorrupt},
		{"trailing garbage", `{"gateway_state":"running"} x`, "", ErrCorrupt},
		{"number state", `{"gateway_state":1}`, "", ErrCorrupt},
		{"newline in state", `{"gateway_state":"running\nprofile=x"}`, "", ErrCorrupt},
		{"uppercase state", `{"gateway_state":"RUNNING"}`, "", ErrCorrupt},
		{"long state", `{"gateway_state":"` + strings.Repeat("a", 65) + `"}`, "", ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "gateway_state.json")
			writeFile(t, p, tc.content)
			got, err := ReadDesired(p)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("state = %q, want %q", got, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestReadDesiredFileProblems(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir, p string)
		err   error
	}{
		{"missing", func(t *testing.T, dir, p string) {}, ErrMissing},
		{"symlink", func(t *testing.T, dir, p string) {
			writeFile(t, filepath.Join(dir, "real"), `{"gateway_state":"running"}`)
			os.Symlink(filepath.Join(dir, "real"), p)
		}, ErrSymlink},
		{"dangling symlink", func(t *testing.T, dir, p string) {
			os.Symlink(filepath.Join(dir, "nowhere"), p)
		}, ErrSymlink},
		{"directory", func(t *testing.T, dir, p string) { os.Mkdir(p, 0o755) }, ErrCorrupt},
		{"fifo does not block", func(t *testing.T, dir, p string) { syscall.Mkfifo(p, 0o644) }, ErrCorrupt},
		{"too large", func(t *testing.T, dir, p string) {
			writeFile(t, p, `{"x":"`+strings.Repeat("a", maxSize)+`","gateway_state":"running"}`)
		}, ErrCorrupt},
		{"unreadable", func(t *testing.T, dir, p string) {
			writeFile(t, p, `{"gateway_state":"running"}`)
			os.Chown(p, 0, 0)
			os.Chmod(p, 0o600)
		}, fs.ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := hermesDir(t)
			p := filepath.Join(dir, "gateway_state.json")
			tc.setup(t, dir, p)
			var got string
			err := asHermes(t, func() (err error) {
				got, err = ReadDesired(p)
				return err
			})
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got != "" {
				t.Errorf("state = %q on error", got)
			}
		})
	}
}

// A symlink higher up the path (a profile dir replaced by a link) is not
// followed either.
func TestReadDesiredSymlinkedDir(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	os.Mkdir(real, 0o755)
	writeFile(t, filepath.Join(real, "gateway_state.json"), `{"gateway_state":"running"}`)
	os.Symlink(real, filepath.Join(root, "profile"))
	_, err := ReadDesired(filepath.Join(root, "profile", "gateway_state.json"))
	if !errors.Is(err, ErrSymlink) {
		t.Errorf("err = %v, want ErrSymlink", err)
	}
}

func FuzzReadDesired(f *testing.F) {
	for _, s := range []string{
		`{"gateway_state":"running"}`, `{"desired_state":"stopped","gateway_state":"draining"}`,
		`{"desired_state":null}`, `[]`, `null`, `{"a":{"b":[1,2,{"c":"\u0000"}]}}`, "\xff", `{"gateway_state":"x"}{}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "gateway_state.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		state, err := ReadDesired(p)
		if err != nil {
			if state != "" {
				t.Fatalf("state %q with error %v", state, err)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNoState) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !validState(state) || state == "draining" || state == "degraded" {
			t.Fatalf("bad state %q", state)
		}
	})
}

// Each file is read up to its own bound (the lifecycle sentinel 64 KiB,
// hinit's record 4 KiB: no further, and beyond, unknown and no record),
// and out of a budget when there is one: a file that would take it below
// zero is not read, and everything the budget paid for is charged. A
// record the budget did not let in leaves the intent unknown (ErrBudget),
// never the file's alone: the record may say stopped where the file says
// running.
func TestReadBounds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pad := func(n int) string { return `,"pad":"` + strings.Repeat("x", n) + `"}` }
	const plenty = 1 << 30
	b := &Budget{Left: plenty}
	write(LifecycleFile, `{"phase":"exited"`+pad(2*maxLifecycle))
	if got := PriorExit(dir, b); got != "unknown" || plenty-b.Left != maxLifecycle {
		t.Errorf("PriorExit of a sentinel over %d bytes = %q, %d bytes read; want unknown, %d read", maxLifecycle, got, plenty-b.Left, maxLifecycle)
	}
	write(LifecycleFile, `{"phase":"exited"}`)
	if got := PriorExit(dir, nil); got != "clean" {
		t.Errorf("PriorExit = %q, want clean", got)
	}
	state := write(StateFileName, `{"desired_state":"running","updated_at":"x"}`)
	write(RecordName, `{"desired_state":"running","replaced":"stopped"`+pad(2*maxRecord))
	b = &Budget{Left: plenty}
	if _, ok, err := readRecord(state, b); ok || err != nil || plenty-b.Left != maxRecord {
		t.Errorf("a record over %d bytes: ok %v, err %v, %d bytes read; want no record, %d read", maxRecord, ok, err, plenty-b.Left, maxRecord)
	}

	b = &Budget{Left: 100}
	if got := PriorExit(dir, b); got != "clean" || b.Left != 100-len(`{"phase":"exited"}`) {
		t.Fatalf("PriorExit = %q with %d left, want clean with %d", got, b.Left, 100-len(`{"phase":"exited"}`))
	}
	left := b.Left
	write("big.json", `{"desired_state":"running"`+pad(100))
	if _, err := ReadIntent(filepath.Join(dir, "big.json"), b); !errors.Is(err, ErrBudget) || b.Left != 0 {
		t.Fatalf("ReadIntent past a budget of %d: %v, %d left; want ErrBudget, 0 left", left, err, b.Left)
	}
	if _, err := ReadIntent(filepath.Join(dir, "small.json"), b); !errors.Is(err, ErrMissing) {
		t.Fatalf("ReadIntent of a missing file with the budget spent: %v, want ErrMissing", err)
	}
	write("empty.json", "")
	if _, _, err := readFile(filepath.Join(dir, "empty.json"), maxSize, b); err != nil {
		t.Fatalf("an empty file with the budget spent: %v", err)
	}

	// The budget lets the state file in, not hinit's record beside it,
	// which says the gateway was stopped.
	write(RecordName, `{"desired_state":"stopped","replaced":"running"}`)
	if in, err := ReadIntent(state, nil); err != nil || in.State != Stopped || !in.Reverted {
		t.Fatalf("ReadIntent with its record = %+v, %v; want stopped, reverted", in, err)
	}
	b = &Budget{Left: len(`{"desired_state":"running","updated_at":"x"}`) + 5}
	if in, err := ReadIntent(state, b); !errors.Is(err, ErrBudget) {
		t.Fatalf("ReadIntent with no budget left for the record = %+v, %v; want ErrBudget", in, err)
	}
}
