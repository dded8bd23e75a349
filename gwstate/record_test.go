package gwstate

import (
	"errors"
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
