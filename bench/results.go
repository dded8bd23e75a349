package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Row is one measured figure: the median of Runs samples, with their range.
type Row struct {
	Scenario string    `json:"scenario"`
	System   string    `json:"system"`
	Metric   string    `json:"metric"`
	Value    float64   `json:"value"` // median
	Unit     string    `json:"unit"`
	Runs     int       `json:"runs"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
	Samples  []float64 `json:"samples,omitempty"`
	Note     string    `json:"note,omitempty"`
}

// Ratio is hinit's median over one peer's, for one scenario and metric,
// both measured in the same run of the harness.
type Ratio struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Peer     string  `json:"peer"`
	Ratio    float64 `json:"hinit_over_peer"`
}

// Results is what one run of the harness writes to bench/results/DATE.json.
type Results struct {
	Date     string            `json:"date"`
	Mode     string            `json:"mode"`
	Machine  map[string]string `json:"machine"`
	Versions map[string]string `json:"versions"`
	Settings map[string]string `json:"settings"`
	Rows     []Row             `json:"rows"`
	Ratios   []Ratio           `json:"ratios"`
}

// add records samples as a row; a row without samples says why in note.
func (r *Results) add(scenario, system, metric, unit string, samples []float64, note string) {
	s := summarize(samples)
	row := Row{Scenario: scenario, System: system, Metric: metric, Unit: unit,
		Runs: s.n, Value: s.median, Min: s.min, Max: s.max, Samples: samples, Note: note}
	if s.n == 0 {
		row.Value, row.Min, row.Max = 0, 0, 0
	}
	r.Rows = append(r.Rows, row)
}

// find returns the row of a scenario, system and metric.
func (r *Results) find(scenario, system, metric string) (Row, bool) {
	for _, row := range r.Rows {
		if row.Scenario == scenario && row.System == system && row.Metric == metric {
			return row, true
		}
	}
	return Row{}, false
}

// computeRatios pairs every hinit row with each peer row of the same
// scenario and metric.
func (r *Results) computeRatios() {
	r.Ratios = nil
	for _, hr := range r.Rows {
		if hr.System != sysHinit || hr.Runs == 0 {
			continue
		}
		for _, pr := range r.Rows {
			if pr.Scenario != hr.Scenario || pr.Metric != hr.Metric || pr.System == sysHinit ||
				pr.System == sysFloor || pr.Runs == 0 || pr.Value == 0 {
				continue
			}
			ratio := hr.Value / pr.Value
			if math.IsInf(ratio, 0) || math.IsNaN(ratio) {
				continue
			}
			r.Ratios = append(r.Ratios, Ratio{Scenario: hr.Scenario, Metric: hr.Metric, Peer: pr.System, Ratio: ratio})
		}
	}
}

// write stores the results as indented JSON at path.
func (r *Results) write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
