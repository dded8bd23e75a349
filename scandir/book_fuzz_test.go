package scandir

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// FuzzBook drives a book with batches decoded from data and checks it
// against a consumer that only sees the Events: both always agree on who
// is accepted and refused, services_max and refusedMax hold, no slot
// stays free while a kept name waits, and an accepted entry is sent with
// its latest content.
func FuzzBook(f *testing.F) {
	f.Add(uint8(1), []byte{0, 1, 2, 0x80, 3, 0xff, 0x81})
	f.Add(uint8(0), []byte{1, 2, 3})
	f.Add(uint8(2), []byte{5, 4, 3, 2, 1, 0xff, 0x85, 0x84, 0xff, 6, 0x41})
	f.Fuzz(func(t *testing.T, max uint8, data []byte) {
		m := int(max % 20)
		tm := time.AfterFunc(3*time.Second, func() { panic(fmt.Sprintf("slow: max=%d data=%q", max, data)) })
		defer tm.Stop()
		b := newBook(m)
		told := map[string]string{}  // name -> "acc" | "ref"
		content := map[string]bool{} // name -> latest Down
		batch := map[string]*Entry{}
		flush := func() {
			evs, newly, unkept := b.apply(batch)
			for _, ev := range evs {
				switch {
				case ev.Refused:
					if told[ev.Name] != "" {
						t.Fatalf("refused %s already told %s", ev.Name, told[ev.Name])
					}
					told[ev.Name] = "ref"
				case ev.Entry != nil:
					told[ev.Name] = "acc"
					if ev.Entry.Down != content[ev.Name] {
						t.Fatalf("%s sent with stale content", ev.Name)
					}
					if ev.Entry.YAML == nil && !ev.Entry.dropped {
						t.Fatalf("%s sent without YAML nor dropped", ev.Name)
					}
				default:
					delete(told, ev.Name)
				}
			}
			for _, n := range newly {
				if told[n] != "ref" {
					t.Fatalf("newly refused %s not told refused", n)
				}
			}
			for _, n := range unkept {
				if told[n] != "" {
					t.Fatalf("unkept %s was told %s", n, told[n])
				}
			}
			acc, ref := 0, 0
			for n, s := range told {
				_, a := b.accepted[n]
				_, r := b.refused[n]
				if s == "acc" && !a || s == "ref" && !r {
					t.Fatalf("%s: consumer %s, book acc=%v ref=%v", n, s, a, r)
				}
				if s == "acc" {
					acc++
				} else {
					ref++
				}
			}
			if acc != len(b.accepted) || ref != len(b.refused) {
				t.Fatalf("consumer %d/%d, book %d/%d", acc, ref, len(b.accepted), len(b.refused))
			}
			if len(b.accepted) > m || len(b.refused) > b.refusedMax() {
				t.Fatalf("bounds: %d accepted (max %d), %d refused", len(b.accepted), m, len(b.refused))
			}
			if len(b.accepted) < m && len(b.refused) > 0 {
				t.Fatalf("free slot while %v wait", slices.Sorted(maps.Keys(b.refused)))
			}
			batch = map[string]*Entry{}
		}
		for _, c := range data {
			if c == 0xff {
				flush()
				continue
			}
			n := fmt.Sprintf("s%02d", c&0x3f)
			switch {
			case c&0xc0 == 0x80:
				batch[n] = nil
				delete(content, n)
			default:
				down := c&0x40 != 0
				content[n] = down
				batch[n] = &Entry{Name: n, Down: down, YAML: []byte("command: [x]\n")}
			}
		}
		flush()
	})
}
