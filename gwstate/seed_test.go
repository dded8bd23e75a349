package gwstate

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSeed(t *testing.T) {
	dir := hermesDir(t)
	p := filepath.Join(dir, "gateway_state.json")
	var created bool
	err := asHermes(t, func() (err error) {
		created, err = Seed(p)
		return err
	})
	if err != nil || !created {
		t.Fatalf("Seed = %v, %v; want true, nil", created, err)
	}
	if got := readString(t, p); got != `{"gateway_state":"running"}` {
		t.Errorf("content %q", got)
	}
	if st, _ := os.Stat(p); ownerUID(st) != hermes.UID {
		t.Errorf("owner uid %d, want %d", ownerUID(st), hermes.UID)
	}
	assertOnlyFile(t, dir, "gateway_state.json")
}

func TestSeedLeavesExisting(t *testing.T) {
	tests := []struct {
		name string
		link bool
	}{
		{"regular file", false},
		{"symlink", true},
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
			writeFile(t, target, `{"gateway_state":"stopped"}`)
			var created bool
			err := asHermes(t, func() (err error) {
				created, err = Seed(p)
				return err
			})
			if err != nil || created {
				t.Fatalf("Seed = %v, %v; want false, nil", created, err)
			}
			if got := readString(t, target); got != `{"gateway_state":"stopped"}` {
				t.Errorf("existing file changed: %q", got)
			}
			assertOnlyFile(t, dir, "gateway_state.json")
		})
	}
}
