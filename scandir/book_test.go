package scandir

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestBookServicesMax pins the services_max policy: accepted names keep their
// slot while they exist, free slots go to waiting names in sorted order.
func TestBookServicesMax(t *testing.T) {
	e := func(n string) *Entry { return &Entry{Name: n, YAML: []byte("command: [x]\n")} }
	down := func(n string) *Entry { x := e(n); x.Down = true; return x }
	other := func(n string) *Entry { x := e(n); x.ino = 2; return x } // another dir, same contents
	type batch map[string]*Entry
	cases := []struct {
		name     string
		max      int
		batches  []batch // the last one is checked
		accepted []string
		refused  []string
		events   []string // of the last batch: "+a" entry, "-a" gone, "!a" refused
		logged   []string // newly refused in the last batch
	}{
		{"under max all accepted", 3, []batch{{"a": e("a"), "b": e("b")}},
			[]string{"a", "b"}, nil, []string{"+a", "+b"}, nil},
		{"first scan over max keeps first names", 2, []batch{{"c": e("c"), "a": e("a"), "b": e("b")}},
			[]string{"a", "b"}, []string{"c"}, []string{"+a", "+b", "!c"}, []string{"c"}},
		{"accepted keep slot against a smaller new name", 2, []batch{{"b": e("b"), "c": e("c")}, {"a": e("a")}},
			[]string{"b", "c"}, []string{"a"}, []string{"!a"}, []string{"a"}},
		{"removal promotes first waiting name", 1, []batch{{"a": e("a"), "c": e("c"), "b": e("b")}, {"a": nil}},
			[]string{"b"}, []string{"c"}, []string{"-a", "+b"}, nil},
		{"removal and new name in one batch", 1, []batch{{"b": e("b")}, {"b": nil, "a": e("a")}},
			[]string{"a"}, nil, []string{"-b", "+a"}, nil},
		{"refused changed is silent", 1, []batch{{"a": e("a"), "b": e("b")}, {"b": down("b")}},
			[]string{"a"}, []string{"b"}, nil, nil},
		{"promoted with its latest entry", 1, []batch{{"a": e("a"), "b": e("b")}, {"b": down("b")}, {"a": nil}},
			[]string{"b"}, nil, []string{"-a", "+b(down)"}, nil},
		{"accepted unchanged is silent", 2, []batch{{"a": e("a")}, {"a": e("a")}},
			[]string{"a"}, nil, nil, nil},
		{"accepted changed", 2, []batch{{"a": e("a")}, {"a": down("a")}},
			[]string{"a"}, nil, []string{"+a(down)"}, nil},
		{"another dir under an accepted name is a removal, then an add", 2, []batch{{"a": e("a"), "b": e("b")}, {"a": other("a")}},
			[]string{"a", "b"}, nil, []string{"-a(replaced)", "+a"}, nil},
		{"another dir under a refused name is silent", 1, []batch{{"a": e("a"), "b": e("b")}, {"b": other("b")}},
			[]string{"a"}, []string{"b"}, nil, nil},
		{"refused gone", 1, []batch{{"a": e("a"), "b": e("b")}, {"b": nil}},
			[]string{"a"}, nil, []string{"-b"}, nil},
		{"unknown gone is silent", 1, []batch{{"x": nil}},
			nil, nil, nil, nil},
		{"max 0 refuses all", 0, []batch{{"a": e("a")}},
			nil, []string{"a"}, []string{"!a"}, []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBook(tc.max)
			var evs []Event
			var logged []string
			for _, in := range tc.batches {
				evs, logged, _ = b.apply(in)
			}
			if got := slices.Sorted(maps.Keys(b.accepted)); !slices.Equal(got, tc.accepted) {
				t.Errorf("accepted = %v, want %v", got, tc.accepted)
			}
			if got := slices.Sorted(maps.Keys(b.refused)); !slices.Equal(got, tc.refused) {
				t.Errorf("refused = %v, want %v", got, tc.refused)
			}
			if got := short(evs); !slices.Equal(got, tc.events) {
				t.Errorf("events = %v, want %v", got, tc.events)
			}
			if !slices.Equal(logged, tc.logged) {
				t.Errorf("newly refused = %v, want %v", logged, tc.logged)
			}
			for _, kept := range []map[string]Entry{b.accepted, b.refused} {
				for n, e := range kept {
					if e.YAML != nil || !e.dropped {
						t.Errorf("the book keeps %s with %d bytes of YAML (dropped %v)", n, len(e.YAML), e.dropped)
					}
				}
			}
		})
	}
}

// TestBookKeepsAtMostRefusedMax: past services_max, at most refusedMax
// names are kept and reported refused (each costs PID 1 a watch, an entry
// and a status row); the rest are returned unkept, and get a place once
// one is free. Before, every refused dir was kept: a user's 60,000 empty
// dirs cost 60,000 watches and 35 MB.
func TestBookKeepsAtMostRefusedMax(t *testing.T) {
	b := newBook(1)
	in := map[string]*Entry{}
	var all []string
	for i := range 20 {
		n := fmt.Sprintf("s%02d", i)
		all = append(all, n)
		in[n] = &Entry{Name: n, YAML: []byte("command: [x]\n")}
	}
	evs, refused, unkept := b.apply(in)
	if got := short(evs); len(got) != 1+minRefusedKept || got[0] != "+s00" || got[len(got)-1] != "!s16" {
		t.Errorf("events %v, want +s00 and !s01..!s16", got)
	}
	if !slices.Equal(refused, all[1:17]) || !slices.Equal(unkept, all[17:]) {
		t.Errorf("refused %v, unkept %v; want s01..s16 and s17..s19", refused, unkept)
	}
	if len(b.refused) != minRefusedKept {
		t.Errorf("%d refused kept, want %d", len(b.refused), minRefusedKept)
	}
	// A kept refusal gone: an unkept name, looked at again, takes its place.
	b.apply(map[string]*Entry{"s01": nil})
	evs, _, unkept = b.apply(map[string]*Entry{"s17": in["s17"], "s18": in["s18"]})
	if got := short(evs); !slices.Equal(got, []string{"!s17"}) || !slices.Equal(unkept, []string{"s18"}) {
		t.Errorf("after a refused dir went: events %v, unkept %v; want !s17 and s18", got, unkept)
	}
}

func short(evs []Event) []string {
	var s []string
	for _, ev := range evs {
		switch {
		case ev.Refused:
			s = append(s, "!"+ev.Name)
		case ev.Entry == nil && ev.Replaced:
			s = append(s, "-"+ev.Name+"(replaced)")
		case ev.Entry == nil:
			s = append(s, "-"+ev.Name)
		case ev.Entry.Down:
			s = append(s, "+"+ev.Name+"(down)")
		default:
			s = append(s, "+"+ev.Name)
		}
	}
	return s
}
