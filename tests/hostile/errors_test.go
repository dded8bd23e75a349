package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"hinit/internal/testprog"
)

// Trial 4 of issue 14: error messages amplify memory. A 64 KiB
// service.yaml of 9389 unknown keys made a 1.9 MB error, kept, logged and
// sent in every status: 300 such dirs took hinit to 829 MB RSS (2.16 GB
// during a status, which then failed: the answer exceeded hsvc's 64 MiB).

// junkDefinition is 64 KiB of unknown keys, the most the scandir reads.
func junkDefinition() []byte {
	var b bytes.Buffer
	for i := 0; ; i++ {
		line := fmt.Sprintf("k%d: 1\n", i)
		if b.Len()+len(line) > 64<<10 {
			return b.Bytes()
		}
		b.WriteString(line)
	}
}

// TestJunkDefinitions: junkDirs hermes dirs of 64 KiB junk keep hinit
// under 30 MB RSS, each reason short, and `hsvc status` working.
func TestJunkDefinitions(t *testing.T) {
	const dirs = junkDirs
	p := startInit(t, "user: \"10000\"\n")
	junk := filepath.Join(p.dir, "junk.yaml")
	must(t, os.WriteFile(junk, junkDefinition(), 0o644))
	asHermes(t, `i=0; while [ $i -lt $2 ]; do i=$((i+1)); mkdir "$3/.j$i"; cp "$1" "$3/.j$i/service.yaml"; mv "$3/.j$i" "$3/j$i"; done`,
		junk, strconv.Itoa(dirs), p.scan)
	// The watcher's reads first, as hinit's log tells them (cheap to look
	// at): a status of hundreds of such rows is not, and asked every few
	// milliseconds it took the CPU the watcher needed. Each read parses
	// 64 KiB of YAML, 80 ms under the race detector and up to 640 ms on
	// CI's busy machine: the wait fails only when the reads stop.
	testprog.WaitForCount(t, time.Minute, "hinit's log naming the junk dirs", dirs, func() int {
		return strings.Count(p.out.String(), "service.yaml:1: k0: unknown key")
	})
	var table statusTable
	testprog.WaitFor(t, 2*time.Minute, fmt.Sprintf("%d junk dirs in hsvc status", dirs), func() bool {
		table = p.statusTable()
		return table.count("j", "unknown key") == dirs
	})
	rss := procKB(t, p.cmd.Process.Pid, "VmRSS")
	t.Logf("hinit with %d junk dirs: VmRSS %d KiB (peak VmHWM %d KiB); status answer %d bytes; longest reason %d bytes",
		dirs, rss, procKB(t, p.cmd.Process.Pid, "VmHWM"), table.size, table.longestReason)
	if rss > rssFactor*30<<10 {
		t.Errorf("hinit's VmRSS is %d KiB, want < %d MiB", rss, rssFactor*30)
	}
	if table.longestReason > 1100 {
		t.Errorf("a reason of %d bytes, want about 1 KiB at most", table.longestReason)
	}
	if !strings.Contains(table.someReason, " more") {
		t.Errorf("a reason does not say how many problems it left out: %q", table.someReason)
	}
	if got := strings.Count(p.out.String(), "unknown key"); got > 20*dirs {
		t.Errorf("hinit logged %d unknown-key problems for %d dirs", got, dirs)
	}
	asHermes(t, `rm -rf "$1"/j*`, p.scan)
	testprog.WaitFor(t, time.Minute, "the junk dirs to leave hsvc status", func() bool {
		return p.statusTable().count("j", "") == 0
	})
	t.Logf("hinit after the junk dirs were removed: VmRSS %d KiB", procKB(t, p.cmd.Process.Pid, "VmRSS"))
}

// statusTable is what the trials read of `hsvc status --json`.
type statusTable struct {
	rows          []svcStatus
	size          int
	longestReason int
	someReason    string
}

// statusTable runs `hsvc status --json` as root, which must succeed.
func (p *initProc) statusTable() statusTable {
	p.t.Helper()
	code, out, errOut := p.hsvc(nil, "status", "--json")
	if code != 0 {
		p.t.Fatalf("hsvc status: exit %d: %.300s", code, errOut)
	}
	var st struct{ Services []svcStatus }
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		p.t.Fatalf("hsvc status --json: %v", err)
	}
	tb := statusTable{rows: st.Services, size: len(out)}
	for _, s := range st.Services {
		if len(s.Reason) > tb.longestReason {
			tb.longestReason, tb.someReason = len(s.Reason), s.Reason
		}
	}
	return tb
}

// count is how many rows' names start with prefix and whose reason holds
// text.
func (tb statusTable) count(prefix, text string) int {
	n := 0
	for _, s := range tb.rows {
		if strings.HasPrefix(s.Name, prefix) && strings.Contains(s.Reason, text) {
			n++
		}
	}
	return n
}

// procKB reads a size field (VmRSS, VmHWM: KiB) of pid from /proc.
func procKB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(t, err)
	v, _ := testprog.StatusField(string(b), field)
	kb, err := strconv.Atoi(strings.TrimSuffix(v, " kB"))
	if err != nil {
		t.Fatalf("%s of /proc/%d/status: %q", field, pid, v)
	}
	return kb
}
