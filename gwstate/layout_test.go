package gwstate

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLayout(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "data")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	h := ResolveHome(link)
	if string(h) != real {
		t.Fatalf("ResolveHome(%s) = %s, want %s", link, h, real)
	}
	if got := h.StateFile("default"); got != real+"/gateway_state.json" {
		t.Errorf("default state file %s", got)
	}
	if got := h.StateFile("coder"); got != real+"/profiles/coder/gateway_state.json" {
		t.Errorf("coder state file %s", got)
	}
	if got := ResolveHome("/no/such/home"); got != "/no/such/home" {
		t.Errorf("unresolvable home: %s", got)
	}
	for _, tc := range []struct {
		slot, profile string
		ok            bool
	}{
		{"gateway-coder", "coder", true},
		{"gateway-default", "default", true},
		{"gateway-", "", false},
		{"dashboard", "", false},
		{"gatewayx-coder", "", false},
		{"gateway-coder/log", "", false}, // an s6 dir's logger, no profile's gateway
	} {
		if p, ok := ProfileOf("gateway", tc.slot); p != tc.profile || ok != tc.ok {
			t.Errorf("ProfileOf(gateway, %s) = %q, %v", tc.slot, p, ok)
		}
		if tc.ok && Slot("gateway", tc.profile) != tc.slot {
			t.Errorf("Slot(gateway, %s) = %s", tc.profile, Slot("gateway", tc.profile))
		}
	}
}
