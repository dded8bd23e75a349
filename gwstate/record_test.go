package gwstate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"hinit/asuser"
)

func TestResolve(t *testing.T) {
	rec := func(desired, replaced string) string {
		return `{"desired_state":"` + desired + `","replaced":"` + replaced + `","written_at":"x"}`
	}
	tests := []struct {
		name, state, record string
		want                Intent
		err                 error
	}{
		{"no record", `{"desired_state":"running"}`, "", Intent{State: Running}, nil},
		{"file agrees", `{"desired_state":"stopped"}`, rec("stopped", "running"), Intent{State: Stopped}, nil},
		{"reverted to the replaced value", `{"desired_state":"running","gateway_state":"stopped"}`, rec("stopped", "running"),
			Intent{State: Stopped, Reverted: true}, nil},
		{"field dropped by a fresh record", `{"gateway_state":"running"}`, rec("stopped", "running"), Intent{State: Stopped, Reverted: true}, nil},
		{"field dropped, none before", `{"gateway_state":"stopped"}`, rec("running", ""), Intent{State: Running, Reverted: true}, nil},
		{"someone else's later value", `{"desired_state":"paused"}`, rec("stopped", "running"), Intent{State: "paused"}, nil},
		{"hermes' CLI's own value (an epoch updated_at)", `{"desired_state":"running","updated_at":1795869897}`, rec("stopped", "running"), Intent{State: Running}, nil},
		{"the gateway's revert (an ISO updated_at)", `{"desired_state":"running","updated_at":"2026-11-28T12:44:57+00:00"}`, rec("stopped", "running"),
			Intent{State: Stopped, Reverted: true}, nil},
		{"a null updated_at is no epoch", `{"desired_state":"running","updated_at":null}`, rec("stopped", "running"),
			Intent{State: Stopped, Reverted: true}, nil},
		{"a settled record does not speak (another supervisor's later start)", `{"desired_state":"running","updated_at":"2026-11-28T12:44:57+00:00"}`,
			`{"desired_state":"stopped","replaced":"running","written_at":"x","settled":true}`, Intent{State: Running}, nil},
		{"nor when the field is gone", `{"gateway_state":"stopped"}`,
			`{"desired_state":"running","replaced":"","written_at":"x","settled":true}`, Intent{State: Stopped}, nil},
		{"malformed record ignored", `{"desired_state":"running"}`, `{"desired_state":"maybe"}`, Intent{State: Running}, nil},
		{"record not JSON ignored", `{"desired_state":"running"}`, `{`, Intent{State: Running}, nil},
		{"gateway_state fallback", `{"gateway_state":"draining"}`, "", Intent{State: Running}, nil},
		{"nothing", `{}`, "", Intent{}, ErrNoState},
		{"corrupt state", `[]`, rec("stopped", "running"), Intent{}, ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r []byte
			if tc.record != "" {
				r = []byte(tc.record)
			}
			got, err := Resolve([]byte(tc.state), r)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("Resolve = %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// A stop racing with the gateway's own read-modify-write rewrites of
// gateway_state.json, 200 times: the file may lose hinit's desired_state,
// ReadDesired never does.
func TestDesiredSurvivesTheGatewayRewrite(t *testing.T) {
	dir := hermesDir(t)
	p := filepath.Join(dir, "gateway_state.json")
	reverted := 0
	for i := 0; i < 200; i++ {
		err := asHermes(t, func() error {
			if err := SetDesired(p, Running, testNow); err != nil {
				return err
			}
			// The gateway reads, hinit writes "stopped", the gateway writes
			// back what it read: hermes' write_runtime_status racing hsvc stop.
			read, mode, err := readFile(p, maxSize, nil)
			if err != nil {
				return err
			}
			if err := SetDesired(p, Stopped, testNow.Add(time.Second)); err != nil {
				return err
			}
			if i%2 == 0 { // every other time the gateway's write lands after hinit's
				return asuser.WriteFileAtomic(p, read, mode)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		in, err := ReadIntent(p, nil)
		if err != nil || in.State != Stopped {
			t.Fatalf("interleaving %d: ReadIntent = %+v, %v; want stopped", i, in, err)
		}
		if in.Reverted {
			reverted++
		}
	}
	if reverted != 100 {
		t.Errorf("%d reverts seen, want 100", reverted)
	}
}

// Settle, a while after a stop: the file kept it (the record is settled),
// or the gateway's rewrite undid it (written again, to be settled in turn).
func TestSettle(t *testing.T) {
	at := testNow
	later := at.Add(SettleAfter)
	recordOf := func(t *testing.T, p string) record {
		t.Helper()
		r, ok := parseRecord([]byte(readString(t, filepath.Join(filepath.Dir(p), RecordName))))
		if !ok {
			t.Fatal("no valid record")
		}
		return r
	}
	setup := func(t *testing.T) string {
		t.Helper()
		p := filepath.Join(hermesDir(t), StateFileName)
		err := asHermes(t, func() error {
			if err := asuser.WriteFileAtomic(p, []byte(`{"gateway_state":"running","desired_state":"running"}`), 0o644); err != nil {
				return err
			}
			return SetDesired(p, Stopped, at)
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	settle := func(t *testing.T, p string, at time.Time) bool {
		t.Helper()
		var again bool
		err := asHermes(t, func() (err error) {
			again, err = Settle(p, at, later)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return again
	}
	t.Run("kept", func(t *testing.T) {
		p := setup(t)
		if settle(t, p, at) {
			t.Fatal("Settle wrote again a file that kept the stop")
		}
		want := record{DesiredState: Stopped, Replaced: Running, WrittenAt: Timestamp(at), Settled: true}
		if r := recordOf(t, p); r != want {
			t.Fatalf("record %+v, want %+v", r, want)
		}
		// The s6 image's start and its gateway's rewrite, on the same
		// volume, before hinit's next boot: a later wish, not a revert.
		writeFile(t, p, `{"gateway_state":"running","desired_state":"running","updated_at":"2026-12-01T10:00:00.000000+00:00"}`)
		if in, err := ReadIntent(p, nil); err != nil || in != (Intent{State: Running}) {
			t.Fatalf("ReadIntent = %+v, %v; want running, not reverted", in, err)
		}
	})
	t.Run("reverted", func(t *testing.T) {
		p := setup(t)
		writeFile(t, p, `{"gateway_state":"stopped","desired_state":"running","updated_at":"2026-11-28T12:44:57.000000+00:00"}`)
		if !settle(t, p, at) {
			t.Fatal("Settle did not write the reverted stop again")
		}
		if in, err := ReadDesired(p); err != nil || in != Stopped {
			t.Fatalf("file says %q, %v after Settle; want stopped", in, err)
		}
		want := record{DesiredState: Stopped, Replaced: Running, WrittenAt: Timestamp(later)}
		if r := recordOf(t, p); r != want {
			t.Fatalf("record %+v, want %+v", r, want)
		}
		if settle(t, p, later) || !recordOf(t, p).Settled {
			t.Fatal("the write again was not settled in turn")
		}
	})
	t.Run("a later write's", func(t *testing.T) {
		p := setup(t)
		if err := asHermes(t, func() error { return SetDesired(p, Running, at.Add(time.Second)) }); err != nil {
			t.Fatal(err)
		}
		if settle(t, p, at) || recordOf(t, p).Settled {
			t.Fatal("Settle of an earlier write settled a later one's record")
		}
	})
	t.Run("file gone", func(t *testing.T) {
		p := setup(t)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		settle(t, p, at)
		if _, err := os.Lstat(filepath.Join(filepath.Dir(p), RecordName)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("record of a removed file kept: %v", err)
		}
	})
}
