package reconcile

import (
	"hinit/svcname"

	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"hinit/config"
)

func TestPublish(t *testing.T) {
	tests := []struct {
		name     string
		instance string
		down     bool
		env      map[string]string
		want     string
	}{
		{"up", "coder", false, nil, "template: gateway\ninstance: coder\n"},
		{"down", "coder", true, nil, "template: gateway\ninstance: coder\n"},
		{"numeric instance stays a string", "123", false, nil, "template: gateway\ninstance: \"123\"\n"},
		{"env", "coder", false, map[string]string{"B": "two words", "A": "x: y\n#z", "E": ""},
			"template: gateway\ninstance: coder\nenv:\n    A: |-\n        x: y\n        #z\n    B: two words\n    E: \"\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scan := t.TempDir()
			if err := Publish(scan, "gateway", tc.instance, tc.down, tc.env); err != nil {
				t.Fatal(err)
			}
			name := "gateway-" + tc.instance
			if got := entries(t, scan); !reflect.DeepEqual(got, []string{name}) {
				t.Errorf("scandir = %v, want only %s", got, name)
			}
			data, err := os.ReadFile(filepath.Join(scan, name, "service.yaml"))
			if err != nil || string(data) != tc.want {
				t.Errorf("service.yaml = %q, %v; want %q", data, err, tc.want)
			}
			_, err = os.Lstat(filepath.Join(scan, name, "down"))
			if (err == nil) != tc.down {
				t.Errorf("down file present = %v, want %v", err == nil, tc.down)
			}
			// What hinit will read back is what was asked for.
			_, ref, err := config.ParseService(filepath.Join(scan, name, "service.yaml"), data, name)
			if err != nil {
				t.Fatal(err)
			}
			if ref.Template != "gateway" || ref.Instance != tc.instance || !sameEnv(ref.Env, tc.env) {
				t.Errorf("read back %+v", ref)
			}
		})
	}
}

func TestPublishRefuses(t *testing.T) {
	tests := []struct {
		name               string
		template, instance string
		env                map[string]string
		err                error
	}{
		{"dot instance", "gateway", "a.b", nil, ErrInvalid},
		{"traversal", "gateway", "../x", nil, ErrInvalid},
		{"upper case", "gateway", "Coder", nil, ErrInvalid},
		{"empty instance", "gateway", "", nil, ErrInvalid},
		{"bad template", ".gw", "coder", nil, ErrInvalid},
		{"too long", "gateway", strings.Repeat("a", 251-len("gateway-")+1), nil, ErrInvalid},
		{"env key with =", "gateway", "coder", map[string]string{"A=B": "x"}, ErrInvalid},
		{"env NUL", "gateway", "coder", map[string]string{"A": "x\x00"}, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scan := t.TempDir()
			err := Publish(scan, tc.template, tc.instance, false, tc.env)
			if !errors.Is(err, tc.err) {
				t.Errorf("err = %v, want %v", err, tc.err)
			}
			if got := entries(t, scan); len(got) != 0 {
				t.Errorf("scandir not empty: %v", got)
			}
		})
	}
}

func TestPublishLongestName(t *testing.T) {
	scan := t.TempDir()
	instance := strings.Repeat("a", svcname.MaxProfileLen)
	if err := Publish(scan, "gateway", instance, false, nil); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, scan); len(got) != 1 || len(got[0]) != len("gateway-")+svcname.MaxProfileLen {
		t.Errorf("scandir = %v", got)
	}
}

// An existing slot, even an empty dir that rename(2) would replace, wins.
func TestPublishExisting(t *testing.T) {
	scan := t.TempDir()
	os.Mkdir(filepath.Join(scan, "gateway-coder"), 0o755)
	if err := Publish(scan, "gateway", "coder", false, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if got := entries(t, scan); !reflect.DeepEqual(got, []string{"gateway-coder"}) {
		t.Errorf("scandir = %v", got)
	}
	if got := entries(t, filepath.Join(scan, "gateway-coder")); len(got) != 0 {
		t.Errorf("existing slot changed: %v", got)
	}
}

// Publishers racing for one name: exactly one wins, nothing is mixed or
// left behind.
func TestPublishConcurrent(t *testing.T) {
	scan := t.TempDir()
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = Publish(scan, "gateway", "coder", i%2 == 0, nil) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrExists):
			t.Errorf("unexpected error %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d publishers won, want 1", won)
	}
	if got := entries(t, scan); !reflect.DeepEqual(got, []string{"gateway-coder"}) {
		t.Errorf("scandir = %v", got)
	}
}

func sameEnv(a, b map[string]string) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}
