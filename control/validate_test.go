package control

import (
	"slices"
	"strings"
	"testing"
)

// Repeated names are dropped by Validate, the first of each kept in order:
// a 60 KB request naming one service 5,000 times became 5,000 actions.
func TestValidateDropsRepeatedNames(t *testing.T) {
	names := []string{"b", "a", "b", "c", "a"}
	r := &Request{V: Version, Verb: VerbStop, Names: names}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "a", "c"}; !slices.Equal(r.Names, want) {
		t.Fatalf("names %q, want %q", r.Names, want)
	}
	if !slices.Equal(names, []string{"b", "a", "b", "c", "a"}) {
		t.Fatalf("the caller's slice changed: %q", names)
	}
	many := &Request{V: Version, Verb: VerbStop, Names: slices.Repeat([]string{"gateway-c"}, 5000)}
	if err := many.Validate(); err != nil || len(many.Names) != 1 {
		t.Fatalf("5000 times gateway-c: %v, %d names", err, len(many.Names))
	}
	one := &Request{V: Version, Verb: VerbWait, Names: []string{"a", "a"}, Until: UntilUp}
	if err := one.Validate(); err != nil {
		t.Fatalf("wait a a: %v", err)
	}
	if err := (&Request{V: Version, Verb: VerbWait, Names: []string{"a", "b"}, Until: UntilUp}).Validate(); err == nil || !strings.Contains(err.Error(), "exactly one") {
		t.Fatalf("wait a b: %v", err)
	}
}
