package bench

import (
	"fmt"
	"math"
	"strings"
)

// goal is hinit's target for one figure, from issues 2, 3 and 6.
type goal struct {
	scenario, metric string // metric: the row's metric, or its prefix when it ends in "*"
	text             string
	check            func(hinit Row, r *Results) (met bool, known bool)
}

// atMost is met when hinit's median is at most limit.
func atMost(limit float64) func(Row, *Results) (bool, bool) {
	return func(h Row, _ *Results) (bool, bool) { return h.Value <= limit, h.Runs > 0 }
}

var goals = []goal{
	{"boot", "boot to main exec", "within 1 ms of tini", func(h Row, r *Results) (bool, bool) {
		t, ok := r.find("boot", sysTini, "boot to main exec")
		return h.Value <= t.Value+1, ok && t.Runs > 0 && h.Runs > 0
	}},
	{"bare", bareRun, "within 1.5× tini", withinTini(1.5)},
	{"bare", bareTerm, "within 1.5× tini", withinTini(1.5)},
	{"memory", "N=3", "≤ 5 MB", atMost(5)},
	{"memory", "N=100", "≤ 8 MB", atMost(8)},
	{"memory", "N=1000", "≤ 20 MB", atMost(20)},
	{"coldstart", "N=3", "≤ 8 ms", atMost(8)},
	{"coldstart", "N=100", "≤ 100 ms", atMost(100)},
	{"coldstart", "N=1000", "≤ 1 s", atMost(1000)},
	{"restart", "SIGKILL*", "≤ 4 ms", atMost(4)},
	{"crashloop", "delay*", "500 ms doubling to 4 s", crashGoal},
	{"rename", "rename*", "≤ 4 ms, no extra call", atMost(4)},
	{"rename", "started without*", "yes", func(h Row, _ *Results) (bool, bool) { return h.Value == 1, h.Runs > 0 }},
	{"control", "status round trip", "≤ 3 ms", atMost(3)},
	{"shutdown", "SIGTERM → PID 1 gone, N=3", "≤ 3 ms", atMost(3)},
	{"shutdown", "SIGTERM → PID 1 gone, N=100", "≤ 60 ms", atMost(60)},
	{"shutdown-stuck", "beyond T", "≤ 10 ms", atMost(10)},
	{"orphans", "1000 orphans*", "≤ 5 ms", atMost(5)},
	{"idle", "init wake-ups*", "0", atMost(0)},
	{"size", "PID 1 program", "≤ 4 MB, static", func(h Row, _ *Results) (bool, bool) {
		return h.Value <= 4 && strings.HasPrefix(h.Note, "static"), h.Runs > 0
	}},
	{"size", "control client", "≤ 3 MB, static", func(h Row, _ *Results) (bool, bool) {
		return h.Value <= 3 && strings.HasPrefix(h.Note, "static"), h.Runs > 0
	}},
}

// withinTini is met when hinit's median is at most f times tini's in the
// same scenario and metric.
func withinTini(f float64) func(Row, *Results) (bool, bool) {
	return func(h Row, r *Results) (bool, bool) {
		t, ok := r.find(h.Scenario, sysTini, h.Metric)
		return h.Value <= f*t.Value, ok && t.Runs > 0 && h.Runs > 0
	}
}

// crashGoal: the k-th delay of hinit's crash loop is 500 ms·2^(k-1),
// capped at 4 s, within 10 % (the metric is "delay KK").
func crashGoal(h Row, _ *Results) (bool, bool) {
	var k int
	if _, err := fmt.Sscanf(h.Metric, "delay %d", &k); err != nil || h.Runs == 0 {
		return false, false
	}
	want := math.Min(500*math.Pow(2, float64(k-1)), 4000)
	return math.Abs(h.Value-want) <= want/10, true
}

// goalFor finds hinit's goal for a row.
func goalFor(row Row) (goal, bool) {
	for _, g := range goals {
		if g.scenario != row.Scenario {
			continue
		}
		if prefix, ok := strings.CutSuffix(g.metric, "*"); ok && strings.HasPrefix(row.Metric, prefix) || g.metric == row.Metric {
			return g, true
		}
	}
	return goal{}, false
}
