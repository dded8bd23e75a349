package errcap

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"short", "abc", 64, "abc"},
		{"exact", strings.Repeat("a", 40), 40, strings.Repeat("a", 40)},
		{"cut", strings.Repeat("a", 100), 40, strings.Repeat("a", 20) + "… (80 more bytes)"},
		{"cut at a rune", strings.Repeat("é", 50), 40, strings.Repeat("é", 10) + "… (80 more bytes)"},
		{"tiny max", strings.Repeat("a", 100), 1, strings.Repeat("a", 12) + "… (88 more bytes)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(tc.in, tc.max)
			if got != tc.want {
				t.Fatalf("Text = %q, want %q", got, tc.want)
			}
			if len(got) > max(tc.max, 32) || !utf8.ValidString(got) {
				t.Fatalf("Text = %q: %d bytes, or not UTF-8", got, len(got))
			}
		})
	}
}

func TestError(t *testing.T) {
	small := errors.New("small")
	if Error(small) != small || Error(nil) != nil {
		t.Fatal("a short error must pass unchanged")
	}
	big := errors.New(strings.Repeat("x", 1<<20))
	got := Error(big)
	if len(got.Error()) > Max || !strings.HasSuffix(got.Error(), "more bytes)") || errors.Is(got, big) {
		t.Fatalf("Error of 1 MiB: %d bytes, %q..., unwraps: %v", len(got.Error()), got.Error()[:20], errors.Is(got, big))
	}
}
