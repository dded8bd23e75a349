package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// writeAll writes the JSON results and, when docs is set, the Markdown
// report and the charts.
func (h *Harness) writeAll(results, docs string) error {
	h.res.computeRatios()
	h.res.Machine["loadavg_end"] = loadavg()
	name := h.res.Date + ".json"
	if h.quick {
		name = h.res.Date + "-quick.json"
	}
	jsonPath := filepath.Join(results, name)
	if err := h.res.write(jsonPath); err != nil {
		return err
	}
	h.logf("wrote %s", jsonPath)
	if docs == "" {
		return nil
	}
	return writeDocs(h.res, jsonPath, docs, h.log)
}

// Render rewrites docs/benchmarks.md and the charts from a results file,
// without measuring anything.
func Render(jsonPath, docs string, log io.Writer) error {
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("decode %s: %w", jsonPath, err)
	}
	r.computeRatios()
	return writeDocs(&r, jsonPath, docs, log)
}

// writeDocs writes benchmarks.md and one chart per scenario under docs.
func writeDocs(r *Results, jsonPath, docs string, log io.Writer) error {
	if err := os.MkdirAll(filepath.Join(docs, "bench"), 0o755); err != nil {
		return err
	}
	var charts []string
	for _, sd := range scenarioDocs {
		if ps := panelsOf(r, sd.id); len(ps) > 0 {
			p := filepath.Join(docs, "bench", sd.id+".svg")
			if err := os.WriteFile(p, []byte(svgChart(sd.title, ps)), 0o644); err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
			charts = append(charts, sd.id)
		}
	}
	md := filepath.Join(docs, "benchmarks.md")
	if err := os.WriteFile(md, []byte(markdown(r, jsonPath, charts)), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", md, err)
	}
	fmt.Fprintf(log, "hbench: wrote %s and %d charts in %s\n", md, len(charts), filepath.Join(docs, "bench"))
	return nil
}

// rowsOf returns a scenario's rows in the order they were measured.
func rowsOf(r *Results, scenario string) []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Scenario == scenario {
			out = append(out, row)
		}
	}
	return out
}

// panelsOf makes a scenario's chart panels: one per metric with a bar per
// system; for the crash loop, one per system with a bar per delay.
func panelsOf(r *Results, scenario string) []panel {
	rows := rowsOf(r, scenario)
	key := func(row Row) string { return row.Metric }
	label := func(row Row) string { return row.System }
	if scenario == "crashloop" {
		key = func(row Row) string { return row.System }
		label = func(row Row) string { return row.Metric }
	}
	var order []string
	byKey := map[string]*panel{}
	for _, row := range rows {
		if scenario == "crashloop" && row.Metric == "starts" {
			continue
		}
		k := key(row)
		p, ok := byKey[k]
		if !ok {
			p = &panel{title: k, unit: row.Unit}
			byKey[k] = p
			order = append(order, k)
		}
		p.bars = append(p.bars, bar{label: label(row), value: row.Value, min: row.Min, max: row.Max, runs: row.Runs,
			hinit: row.System == sysHinit, floor: row.System == sysFloor, none: row.Runs == 0})
	}
	out := make([]panel, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

// bestPeer is the peer with the best median for a scenario and metric:
// the lowest, or for a yes=1 metric the highest.
func bestPeer(r *Results, scenario, metric string) (Row, bool) {
	var best Row
	found := false
	for _, row := range r.Rows {
		if row.Scenario != scenario || row.Metric != metric || row.System == sysHinit || row.System == sysFloor || row.Runs == 0 {
			continue
		}
		better := row.Value < best.Value
		if row.Unit == "yes=1" {
			better = row.Value > best.Value
		}
		if !found || better {
			best, found = row, true
		}
	}
	return best, found
}

// ratioOf is hinit's median over a peer's, from the same run.
func ratioOf(r *Results, scenario, metric, peer string) (float64, bool) {
	for _, q := range r.Ratios {
		if q.Scenario == scenario && q.Metric == metric && q.Peer == peer {
			return q.Ratio, true
		}
	}
	return 0, false
}

// loadavg is /proc/loadavg's first three fields: how busy the machine was.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
