package gwstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"hinit/internal/hangfs"
)

var testNow = time.Date(2026, 5, 21, 6, 18, 5, 123456789, time.FixedZone("CEST", 2*3600))

func TestTimestamp(t *testing.T) {
	const want = "2026-05-21T04:18:05.123456+00:00"
	if got := Timestamp(testNow); got != want {
		t.Errorf("Timestamp = %q, want %q", got, want)
	}
	if _, err := time.Parse(time.RFC3339Nano, want); err != nil {
		t.Errorf("not RFC 3339: %v", err)
	}
}

func TestSetDesired(t *testing.T) {
	ts := `"` + Timestamp(testNow) + `"`
	tests := []struct {
		name    string
		before  string // "" = no file
		desired string
		want    string
	}{
		{"missing file", "", "running", `{"desired_state":"running","updated_at":` + ts + `}`},
		{"fields and order kept", `{"pid":42,"desired_state":"running","kind":"hermes-gateway","updated_at":1716272285,"z":null}`,
			"stopped", `{"pid":42,"desired_state":"stopped","kind":"hermes-gateway","updated_at":` + ts + `,"z":null}`},
		{"appended at end", `{"gateway_state":"running","pid":7}`, "stopped",
			`{"gateway_state":"running","pid":7,"desired_state":"stopped","updated_at":` + ts + `}`},
		{"literals kept", `{"big":12345678901234567890,"f":1.50e+10,"s":"caf\u00e9 \"q\" \/","u":"é","d":"desired_state"}`, "running",
			`{"big":12345678901234567890,"f":1.50e+10,"s":"caf\u00e9 \"q\" \/","u":"é","d":"desired_state","desired_state":"running","updated_at":` + ts + `}`},
		{"escaped key kept", `{"k\u0065y":1}`, "running", `{"k\u0065y":1,"desired_state":"running","updated_at":` + ts + `}`},
		{"nested compacted", "{\n  \"platforms\": {\n    \"tg\": {\"state\": \"connected\", \"n\": [1, 2]}\n  }\n}\n", "stopped",
			`{"platforms":{"tg":{"state":"connected","n":[1,2]}},"desired_state":"stopped","updated_at":` + ts + `}`},
		{"byte order mark dropped, as hermes writes", "\xef\xbb\xbf{\"gateway_state\":\"stopped\"}\r\n", "running",
			`{"gateway_state":"stopped","desired_state":"running","updated_at":` + ts + `}`},
		{"duplicate key: first place, last value", `{"a":1,"b":2,"a":3}`, "running",
			`{"a":3,"b":2,"desired_state":"running","updated_at":` + ts + `}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := hermesDir(t)
			p := filepath.Join(dir, "gateway_state.json")
			if tc.before != "" {
				writeFile(t, p, tc.before)
				os.Chown(p, hermes.UID, hermes.GID)
			}
			if err := asHermes(t, func() error { return SetDesired(p, tc.desired, testNow) }); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, p); got != tc.want {
				t.Errorf("file =\n%s\nwant\n%s", got, tc.want)
			}
			if got, err := ReadDesired(p); err != nil || got != tc.desired {
				t.Errorf("ReadDesired = %q, %v", got, err)
			}
			assertOnlyFile(t, dir, RecordName+",gateway_state.json")
		})
	}
}

func TestSetDesiredKeepsMode(t *testing.T) {
	dir := hermesDir(t)
	p := filepath.Join(dir, "gateway_state.json")
	writeFile(t, p, `{"gateway_state":"running"}`)
	os.Chown(p, hermes.UID, hermes.GID)
	os.Chmod(p, 0o600)
	if err := asHermes(t, func() error { return SetDesired(p, Stopped, testNow) }); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

// A corrupt or symlinked file, or a bad desired value, changes nothing.
func TestSetDesiredRefuses(t *testing.T) {
	tests := []struct {
		name    string
		content string
		link    bool
		desired string
		err     error
	}{
		{"corrupt", `{"gateway_state":"run`, false, "running", ErrCorrupt},
		{"not an object", `["x"]`, false, "running", ErrCorrupt},
		{"trailing data", `{} {}`, false, "running", ErrCorrupt},
		{"symlink", `{"gateway_state":"running"}`, true, "stopped", ErrSymlink},
		{"bad desired", `{"gateway_state":"running"}`, false, "draining", ErrInvalid},
		// Each merge of a 4 MiB file of tiny keys took 2 s of PID 1's CPU.
		{"too large to merge", `{"gateway_state":"running","pad":"` + strings.Repeat("x", maxWriteSize) + `"}`, false, "stopped", ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := hermesDir(t)
			p := filepath.Join(dir, "gateway_state.json")
			target := p
			if tc.link {
				target = filepath.Join(filepath.Dir(dir), "outside.json")
				os.Symlink(target, p)
			}
			writeFile(t, target, tc.content)
			os.Chown(target, hermes.UID, hermes.GID)
			before, _ := os.Lstat(p)
			err := asHermes(t, func() error { return SetDesired(p, tc.desired, testNow) })
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got := readString(t, target); got != tc.content {
				t.Errorf("content changed to %q", got)
			}
			if after, _ := os.Lstat(p); !os.SameFile(before, after) {
				t.Error("file was replaced")
			}
		})
	}
}

func FuzzSetDesired(f *testing.F) {
	for _, s := range []string{
		`{"gateway_state":"running","pid":1,"platforms":{"a":{"b":[1,2.5e3,null,true]}}}`,
		`{"desired_state":"stopped","updated_at":17}`, `{"a":1,"a":2}`, `{"\u00e9":"\ud83d\ude00"}`,
		"{\n \"x\" : [ ] ,\"y\":{}}\n", `[]`, `{`, "\xff",
	} {
		f.Add([]byte(s), true)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, run bool) {
		desired := Stopped
		if run {
			desired = Running
		}
		p := filepath.Join(dir, "gateway_state.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := SetDesired(p, desired, testNow); err != nil {
			if got := readString(t, p); got != string(data) {
				t.Fatalf("file changed despite %v", err)
			}
			return
		}
		after := []byte(readString(t, p))
		if state, err := ReadDesired(p); err != nil || state != desired {
			t.Fatalf("ReadDesired after SetDesired = %q, %v", state, err)
		}
		assertSameExcept(t, data, after)
	})
}

// assertSameExcept checks that after means what before meant, but for the
// two fields SetDesired owns.
func assertSameExcept(t *testing.T, before, after []byte) {
	t.Helper()
	b, a := decode(t, before), decode(t, after)
	for _, k := range []string{"desired_state", "updated_at"} {
		delete(b, k)
		delete(a, k)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("fields changed:\nbefore %s\nafter  %s", before, after)
	}
}

func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	return m
}

// assertOnlyFile: dir holds name alone (names, comma-separated and sorted,
// for more).
func assertOnlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != name {
		t.Errorf("dir holds %v, want only %s", names, name)
	}
}

// A stop and a start of one gateway at once (two hsvc calls) leave the
// file and hinit's record agreeing: the next boot reads the desired_state
// of the call that wrote last, not a revert by the gateway. Before, the
// two calls' file and record writes could interleave, the record of the
// first landing last (13 of 500 pairs).
func TestSetDesiredConcurrent(t *testing.T) {
	for i := range 300 {
		p := filepath.Join(t.TempDir(), StateFileName)
		if err := os.WriteFile(p, []byte(`{"gateway_state":"running","desired_state":"running"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, d := range []string{Stopped, Running} {
			wg.Go(func() {
				if err := SetDesired(p, d, time.Now()); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		in, err := ReadIntent(p, nil)
		if err != nil || in.Reverted {
			data, _ := os.ReadFile(p)
			rec, _ := os.ReadFile(filepath.Join(filepath.Dir(p), RecordName))
			t.Fatalf("pair %d: intent %+v, %v; file %s, record %s", i, in, err, data, rec)
		}
	}
}

// A gateway rewrite that read the file before two hinit writes of the
// same value (two stops) and renames after both: the second write's record
// said it replaced "stopped", so the reverted "running" was taken for a
// later decision and won. The same wish again keeps what the first replaced.
func TestRevertAcrossTwoSameWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFileName)
	stale := []byte(`{"gateway_state":"running","desired_state":"running"}`)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(path, stale, 0o644)) // the gateway reads this...
	must(SetDesired(path, Stopped, time.Now()))
	must(SetDesired(path, Stopped, time.Now())) // hsvc stop again (retry, stop --all)
	must(os.WriteFile(path, stale, 0o644))      // ...and renames it now
	got, err := ReadDesired(path)
	if got != Stopped {
		t.Errorf("desired %q (%v), want stopped", got, err)
	}
}

// TestSetDesiredKeepsAConcurrentGatewayWrite: hermes' gateway rewrites
// gateway_state.json whole (write_runtime_status: temp file, rename) on
// every change of its state. A write of the gateway that lands while
// SetDesired is between its read of the file and its rename must not be
// undone by that rename: hinit owns desired_state and updated_at only,
// every other field is the gateway's ("other fields kept",
// docs/hermes-adapter.md). hangfs holds SetDesired in its write(2) of the
// temp file, after its read: the gateway's rename happens exactly there.
func TestSetDesiredKeepsAConcurrentGatewayWrite(t *testing.T) {
	h := hangfs.Mount(t)
	os.Chown(h.Backing, hermes.UID, hermes.GID)
	os.Chmod(h.Dir, 0o755)
	os.Chmod(filepath.Dir(h.Dir), 0o755)               // t.TempDir's, root's 0700
	os.Chmod(filepath.Dir(filepath.Dir(h.Dir)), 0o755) // and its parent
	backing := filepath.Join(h.Backing, "gateway_state.json")
	writeFile(t, backing, `{"pid":41,"gateway_state":"starting","desired_state":"running","updated_at":"2026-05-21T06:18:05.000000+00:00"}`)
	os.Chown(backing, hermes.UID, hermes.GID)
	// The gateway's next write, made ready before the hang: it reached
	// running and its platform connected.
	gwTmp := filepath.Join(h.Backing, ".gateway_state_x.tmp")
	writeFile(t, gwTmp, `{"pid":41,"gateway_state":"running","desired_state":"running","platforms":{"telegram":{"state":"connected"}},"updated_at":"2026-05-21T06:18:06.000000+00:00"}`)

	h.Hang()
	done := make(chan error, 1)
	go func() {
		done <- asHermes(t, func() error { return SetDesired(filepath.Join(h.Dir, "gateway_state.json"), Stopped, testNow) })
	}()
	select {
	case <-h.Stuck(): // SetDesired has read the file and is writing its temp file
	case err := <-done:
		t.Fatalf("SetDesired ended before its write: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("SetDesired never wrote")
	}
	if err := os.Rename(gwTmp, backing); err != nil { // the gateway's write lands
		t.Fatal(err)
	}
	h.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	var doc map[string]any
	if err := json.Unmarshal([]byte(readString(t, backing)), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["desired_state"] != Stopped {
		t.Errorf("desired_state = %v, want stopped", doc["desired_state"])
	}
	if doc["gateway_state"] != "running" || doc["platforms"] == nil {
		t.Errorf("the gateway's concurrent write is lost: gateway_state = %v, platforms = %v (file: %s)",
			doc["gateway_state"], doc["platforms"], readString(t, backing))
	}
}

// TestSetDesiredAgainstANonStopWriter: a writer that replaces the file
// without a pause (a heartbeat far faster than SetDesired's fsyncs) beats
// every checked merge; the last merge is written all the same. Before,
// SetDesired gave up with "replaced by another writer meanwhile", and hsvc
// stop said the wish was not recorded.
func TestSetDesiredAgainstANonStopWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gateway_state.json")
	writeFile(t, path, `{"gateway_state":"running","desired_state":"running"}`)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp := filepath.Join(dir, ".hb.tmp")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.WriteFile(tmp, fmt.Appendf(nil, `{"gateway_state":"running","desired_state":"running","beat":%d}`, i), 0o644)
			os.Rename(tmp, path)
		}
	}()
	err := SetDesired(path, Stopped, testNow)
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("SetDesired against a non-stop writer: %v", err)
	}
	if data, ok, _ := readRecord(path, nil); !ok || !strings.Contains(string(data), `"desired_state":"stopped"`) {
		t.Errorf("hinit's record: %q (%v), want desired_state stopped", data, ok)
	}
}

// TestSetDesiredWaitsOnlyForItsFile: a record waits for another on the same
// file, never for one on another gateway's: the hermes user, making its own
// file slow to merge and asking again and again, held root's records of
// every other gateway behind one lock, for minutes.
func TestSetDesiredWaitsOnlyForItsFile(t *testing.T) {
	dir := hermesDir(t)
	held := filepath.Join(dir, "held.json")
	p := filepath.Join(dir, "gateway_state.json")
	unlock := setting.Lock(held)
	defer unlock()
	done := make(chan error, 1)
	go func() { done <- asHermes(t, func() error { return SetDesired(p, Stopped, testNow) }) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a record waited for another file's")
	}
}
