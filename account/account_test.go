package account

import (
	"errors"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name, spec string
		uid, gid   int
		user, home string
	}{
		{"root by name", "root", 0, 0, "root", "/root"},
		{"root by uid", "0", 0, 0, "root", "/root"},
		{"numeric uid without passwd entry", "54321", 54321, 54321, "54321", "/"},
		{"uid and gid", "54321:777", 54321, 777, "54321", "/"},
		{"name and group name", "root:root", 0, 0, "root", "/root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Lookup(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if a.UID != tt.uid || a.GID != tt.gid || a.Name != tt.user || a.Home != tt.home {
				t.Errorf("Lookup(%q) = %+v", tt.spec, a)
			}
			if a.Groups[0] != tt.gid {
				t.Errorf("groups %v do not start with gid %d", a.Groups, tt.gid)
			}
		})
	}
	if _, err := Lookup("no-such-user-here"); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown name: %v, want ErrUnknown", err)
	}
}
