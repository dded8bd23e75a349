package svclog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"hinit/internal/testprog"
)

func TestRotation(t *testing.T) {
	const lines, width = 1000, 20
	entrySize := int64(len(stampLayout) + 1 + width + 1)
	tests := []struct {
		name         string
		maxSize      int64
		keep         int
		wantArchives int
	}{
		{"keeps the newest", 10 * entrySize, 3, 3},
		{"keeps all when there is room", 100 * entrySize, 100, 9},
		{"size not a multiple of a line", 10*entrySize + entrySize/2, 3, 3},
		{"keep none", 100 * entrySize, -1, 0},
		{"keep 0 is none", 100 * entrySize, 0, 0}, // log.keep: 0 in hinit.yaml; it kept 10
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := newLog(t, Options{Dir: dir, MaxSize: tc.maxSize, Keep: tc.keep})
			produce(t, l.Writer(), lines, width)
			closeLog(t, l)

			names, err := archives(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) != tc.wantArchives {
				t.Fatalf("%d archives %v, want %d", len(names), names, tc.wantArchives)
			}
			var all []entry
			var bytes int64
			for _, name := range append(names, currentName) {
				p := filepath.Join(dir, name)
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if st.Size() > tc.maxSize {
					t.Fatalf("%s has %d bytes, more than %d", name, st.Size(), tc.maxSize)
				}
				bytes += st.Size()
				all = append(all, readEntries(t, p)...)
			}
			// What is kept is the tail of what was written, every byte of it.
			first := lines - len(all) + 1
			for i, e := range all {
				if want := padLine(first+i, width); e.text != want {
					t.Fatalf("line %d of the kept logs is %q, want %q", i, e.text, want)
				}
			}
			if want := int64(len(all)) * entrySize; bytes != want {
				t.Fatalf("files hold %d bytes, want %d for %d lines", bytes, want, len(all))
			}
			if full := (tc.maxSize / entrySize) * entrySize; len(names) > 0 && bytes < full*int64(len(names)) {
				t.Fatalf("archives are not full: %d bytes in %d archives of %d", bytes, len(names), full)
			}
		})
	}
}

// TestOwner: the dir, current and the archives are created as the Owner
// inside the Owner's dir, which root does not need to touch.
func TestOwner(t *testing.T) {
	requireRoot(t)
	dir := filepath.Join(userHome(t), "logs", "svc")
	l := newLog(t, Options{Dir: dir, MaxSize: 1000, Keep: 2, Owner: alice})
	produce(t, l.Writer(), 100, 20)
	closeLog(t, l)

	names, _ := archives(dir)
	if len(names) != 2 {
		t.Fatalf("archives %v, want 2", names)
	}
	for _, p := range []string{filepath.Dir(dir), dir, l.Path(), filepath.Join(dir, names[0])} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if int(sys.Uid) != alice.UID || int(sys.Gid) != alice.GID {
			t.Errorf("%s owned by %d:%d, want %d:%d", p, sys.Uid, sys.Gid, alice.UID, alice.GID)
		}
	}
	if l.Lost() != 0 {
		t.Fatalf("lost %d lines", l.Lost())
	}
}

// TestArchiveNames: archives are named for the rotation time, s6-log style,
// and stay distinct when the clock stands still.
func TestArchiveNames(t *testing.T) {
	clock := newClock()
	dir := t.TempDir()
	l := newLog(t, Options{Dir: dir, MaxSize: 100, Keep: 10, Now: clock.Now})
	for i := range 4 {
		fmt.Fprintf(l.Writer(), "%s\n", strings.Repeat("x", 60+i))
	}
	closeLog(t, l)
	names, _ := archives(dir)
	want := "@20260521T061805.123456Z.s @20260521T061805.123457Z.s @20260521T061805.123458Z.s"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("archives %s, want %s", got, want)
	}
}

// TestPruneAmongManyEntries: a log dir its owner filled with thousands of
// other entries and of old archives is pruned to keep across many batches
// of names: the newest archives stay, the other entries are left alone.
// (What the batches are for, holding at most keep+1 names where prune held
// every name in the dir, is not measured here.)
func TestPruneAmongManyEntries(t *testing.T) {
	clock := newClock()
	dir := t.TempDir()
	long := strings.Repeat("n", 200)
	for i := range 1500 {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%04d", long, i)), nil, 0o644))
	}
	var planted []string
	for i := range 700 { // older than any rotation of the test clock
		name := time.Date(2000, 1, 1, 0, 0, 0, i*1000, time.UTC).Format(archiveLayout)
		planted = append(planted, name)
		must(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	l := newLog(t, Options{Dir: dir, MaxSize: 100, Keep: 3, Now: clock.Now})
	fmt.Fprintf(l.Writer(), "%s\n%s\n", strings.Repeat("x", 60), strings.Repeat("y", 60)) // one rotation
	closeLog(t, l)
	names, _ := archives(dir)
	want := []string{planted[698], planted[699], "@20260521T061805.123456Z.s"}
	if !slices.Equal(names, want) {
		t.Fatalf("archives %v, want %v", names, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1500+3+1 {
		t.Fatalf("%d entries left, want the 1500 others, 3 archives and current", len(ents))
	}
}

// TestRotationListsTheDirOnce: a log dir is its owner's, who may fill it
// with other entries, and a definition of its own may ask max_size: 1, a
// rotation per line. Each rotation listed the whole dir to prune it: 200
// lines among 20,000 other entries took 3.7 s, 0.12 s now. The dir is listed at
// its first rotation and its newest archives are known from then on.
func TestRotationListsTheDirOnce(t *testing.T) {
	clock := newClock()
	dir := t.TempDir()
	for i := range 2000 {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("other-%04d", i)), nil, 0o644))
	}
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Format(archiveLayout)
	must(t, os.WriteFile(filepath.Join(dir, old), nil, 0o644))
	const lines = 50
	l := newLog(t, Options{Dir: dir, MaxSize: 1, Keep: 2, Now: clock.Now})
	for i := range lines {
		fmt.Fprintf(l.Writer(), "l%d\n", i)
	}
	closeLog(t, l)
	if n := l.outs[0].w.(*fileWriter).listed; n != 1 {
		t.Errorf("the dir was listed %d times while %d lines rotated it, want once", n, lines)
	}
	names, _ := archives(dir)
	if len(names) != 2 || slices.Contains(names, old) {
		t.Fatalf("archives %v, want the 2 newest", names)
	}
	if es := readEntries(t, filepath.Join(dir, names[1])); len(es) != 1 || es[0].text != fmt.Sprintf("l%d", lines-2) {
		t.Fatalf("the newest archive holds %v, want l%d", texts(es), lines-2)
	}
	if es := readEntries(t, filepath.Join(dir, currentName)); len(es) != 1 || es[0].text != fmt.Sprintf("l%d", lines-1) {
		t.Fatalf("current holds %v, want l%d", texts(es), lines-1)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2000+2+1 {
		t.Fatalf("%d entries left, want the 2000 others, 2 archives and current", len(ents))
	}
}

// A dir planted under an archive's name cannot be deleted, and pruning
// goes on past it: the other old archives go, the error is logged. Before,
// prune stopped at it, and at every later rotation too: archives were
// never deleted again.
func TestPruneGoesPastAPlantedDir(t *testing.T) {
	clock := newClock()
	dir := t.TempDir()
	stamp := func(i int) string {
		return time.Date(2000, 1, 1, 0, 0, 0, i*1000, time.UTC).Format(archiveLayout)
	}
	must(t, os.Mkdir(filepath.Join(dir, stamp(0)), 0o755)) // the oldest
	for i := 1; i <= 300; i++ {
		must(t, os.WriteFile(filepath.Join(dir, stamp(i)), nil, 0o644))
	}
	l := newLog(t, Options{Dir: dir, MaxSize: 100, Keep: 2, Now: clock.Now})
	fmt.Fprintf(l.Writer(), "%s\n%s\n", strings.Repeat("x", 60), strings.Repeat("y", 60)) // one rotation
	closeLog(t, l)
	names, _ := archives(dir)
	if want := []string{stamp(0), stamp(300), "@20260521T061805.123456Z.s"}; !slices.Equal(names, want) {
		t.Fatalf("archives %v, want %v", names, want)
	}
}

// Archive names never go back, so pruning keeps the newest lines after
// the clock steps back (NTP, a VM resumed), within a Log and across a
// restart of it (a new Log on the same dir). Before, an archive named from
// the stepped-back clock sorted before the older ones and was pruned first.
func TestClockBackKeepsNewestArchives(t *testing.T) {
	clock := newClock()
	dir := t.TempDir()
	line := func(i int) string { return fmt.Sprintf("line %d %s", i, strings.Repeat("x", 50)) }
	write := func(l *Log, i int) {
		fmt.Fprintf(l.Writer(), "%s\n", line(i))
		testprog.WaitFor(t, 5*time.Second, "the line in current", func() bool {
			b, _ := os.ReadFile(l.Path())
			return strings.Contains(string(b), line(i))
		})
	}
	kept := func() []string {
		names, _ := archives(dir)
		var out []string
		for _, n := range append(names, currentName) {
			out = append(out, texts(readEntries(t, filepath.Join(dir, n)))...)
		}
		return out
	}
	l := newLog(t, Options{Dir: dir, MaxSize: 100, Keep: 2, Now: clock.Now})
	for i := 1; i <= 4; i++ { // one line a file: three rotations
		write(l, i)
	}
	clock.Add(-time.Hour)
	write(l, 5)
	closeLog(t, l)
	if got, want := kept(), []string{line(3), line(4), line(5)}; !slices.Equal(got, want) {
		t.Errorf("after the clock stepped back, the dir keeps %q, want lines 3, 4, 5", short(got))
	}

	clock.Add(-time.Hour) // and back again before the service restarts
	l = newLog(t, Options{Dir: dir, MaxSize: 100, Keep: 2, Now: clock.Now})
	write(l, 6)
	closeLog(t, l)
	if got, want := kept(), []string{line(4), line(5), line(6)}; !slices.Equal(got, want) {
		t.Errorf("after a restart with the clock further back, the dir keeps %q, want lines 4, 5, 6", short(got))
	}
}

// short is each text's first 6 bytes.
func short(ts []string) []string {
	out := make([]string, len(ts))
	for i, s := range ts {
		out[i] = s[:min(6, len(s))]
	}
	return out
}

// A name planted at the year 9999 (by the log dir's owner) is no floor:
// one microsecond after it has a fifth year digit and sorts first, so the
// clock names the archive, which sorts before the planted one and after
// the others, as it would without it.
func TestArchiveNameAfterYear9999(t *testing.T) {
	dir := t.TempDir()
	planted := "@99991231T235959.999999Z.s"
	if err := os.WriteFile(filepath.Join(dir, planted), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	l := newLog(t, Options{Dir: dir, MaxSize: 100, Keep: 10, Now: clock.Now})
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(l.Writer(), "line %d %s\n", i, strings.Repeat("x", 50))
		testprog.WaitFor(t, 5*time.Second, "the line in current", func() bool {
			b, _ := os.ReadFile(l.Path())
			return strings.Contains(string(b), fmt.Sprintf("line %d", i))
		})
	}
	closeLog(t, l)
	names, _ := archives(dir)
	if want := []string{clock.Now().UTC().Format(archiveLayout), planted}; !slices.Equal(names, want) {
		t.Errorf("archives %v, want %v", names, want)
	}
}

// s6Archive is the name s6-log gives an archive rotated at t: @, the
// TAI64N label (2^62 + 10 + the Unix seconds, then the nanoseconds) in
// hex, .s.
func s6Archive(t time.Time) string {
	return fmt.Sprintf("@%016x%08x.s", uint64(1)<<62+10+uint64(t.Unix()), t.Nanosecond())
}

// TestS6LogArchivesAreOlder: a gateway's log dir on a volume the s6 image
// wrote holds s6-log's archives, named by TAI64N label (@4000...). They
// are older than what hinit writes there and are pruned first, and
// Archives lists them first. Before, "@4000..." sorted after hinit's
// "@2026...": the s6 archives counted as the newest and were kept for
// ever, while each archive of hinit's was deleted as soon as it was made.
// The newest is s6-log's unfinished archive (.u, an s6-log killed): an
// archive like the others, listed and pruned; before, it was neither.
func TestS6LogArchivesAreOlder(t *testing.T) {
	clock := newClock()
	dir := t.TempDir()
	var s6 []string
	for i := range 10 { // s6-log's n10, from the week before the upgrade
		s6 = append(s6, s6Archive(clock.Now().Add(time.Duration(i-10)*24*time.Hour)))
		if i == 9 {
			s6[i] = strings.TrimSuffix(s6[i], ".s") + ".u"
		}
		must(t, os.WriteFile(filepath.Join(dir, s6[i]), []byte("2026-05-11T00:00:00.000000000  old\n"), 0o644))
	}
	l := newLog(t, Options{Dir: dir, MaxSize: 100, Keep: 3, Now: clock.Now})
	for _, c := range "xyz" { // one line a file: two rotations
		fmt.Fprintf(l.Writer(), "%s\n", strings.Repeat(string(c), 60))
		testprog.WaitFor(t, 5*time.Second, "the line in current", func() bool {
			b, _ := os.ReadFile(l.Path())
			return strings.Contains(string(b), strings.Repeat(string(c), 60))
		})
		clock.Add(time.Second)
	}
	closeLog(t, l)
	got, err := Archives(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{s6[9], "@20260521T061806.123456Z.s", "@20260521T061807.123456Z.s"}
	if !slices.Equal(got, want) {
		t.Fatalf("Archives: %v, want the newest of s6-log's and hinit's two, oldest first: %v", got, want)
	}
}
