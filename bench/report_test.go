package bench

import (
	"encoding/xml"
	"math"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name             string
		in               []float64
		median, min, max float64
	}{
		{"odd count", []float64{3, 1, 2}, 2, 1, 3},
		{"even count averages the middle two", []float64{4, 1, 3, 2}, 2.5, 1, 4},
		{"one sample", []float64{7}, 7, 7, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := summarize(tt.in)
			if s.median != tt.median || s.min != tt.min || s.max != tt.max || s.n != len(tt.in) {
				t.Errorf("summarize(%v) = %+v, want median %g min %g max %g", tt.in, s, tt.median, tt.min, tt.max)
			}
		})
	}
	if s := summarize(nil); !math.IsNaN(s.median) || s.n != 0 {
		t.Errorf("summarize(nil) = %+v, want NaN and no samples", s)
	}
}

func TestFmtValue(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		unit string
		want string
	}{
		{"small keeps two decimals", 1.234, "ms", "1.23 ms"},
		{"tens keep one", 12.34, "ms", "12.3 ms"},
		{"hundreds none", 1234.5, "ms", "1234 ms"},
		{"whole numbers none", 30, "wake-ups", "30 wake-ups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmtValue(tt.v, tt.unit); got != tt.want {
				t.Errorf("fmtValue(%g, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
			}
		})
	}
}

// sample is a results set with hinit, a peer and the floor.
func sample() *Results {
	r := &Results{Machine: map[string]string{}, Versions: map[string]string{}}
	r.add("boot", sysFloor, "boot to main exec", "ms", []float64{1, 1.1}, "")
	r.add("boot", sysHinit, "boot to main exec", "ms", []float64{2, 2.2, 2.4}, "")
	r.add("boot", sysTini, "boot to main exec", "ms", []float64{1.5, 1.6}, "")
	r.add("idle", sysS6, "init wake-ups in 10s", "wake-ups", nil, "no result <here>")
	r.computeRatios()
	return r
}

func TestRatiosArePairwise(t *testing.T) {
	r := sample()
	if len(r.Ratios) != 1 {
		t.Fatalf("ratios = %+v, want one: hinit over tini (never over the floor)", r.Ratios)
	}
	if q := r.Ratios[0]; q.Peer != sysTini || math.Abs(q.Ratio-2.2/1.55) > 1e-9 {
		t.Errorf("ratio = %+v, want hinit/tini = %g", q, 2.2/1.55)
	}
}

func TestChartIsWellFormedSVG(t *testing.T) {
	r := sample()
	for _, scenario := range []string{"boot", "idle"} {
		svg := svgChart("a <title> & more", panelsOf(r, scenario))
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			_, err := d.Token()
			if err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("%s: chart is not well-formed XML: %v\n%s", scenario, err, svg)
				}
				break
			}
		}
	}
}

func TestMarkdownNamesGoalsAndRatios(t *testing.T) {
	md := markdown(sample(), "bench/results/x.json", []string{"boot"})
	for _, want := range []string{
		"| boot | boot to main exec | 2.20 ms | tini 1.55 ms | 1.42 | 1.05 ms | within 1 ms of tini | yes |",
		"![Boot to main exec](bench/boot.svg)",
		"| s6 | init wake-ups in 10s | no result |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestSummaryFloorOfShutdown: a shutdown's floor is the Go program holding
// an inotify watch, whatever N.
func TestSummaryFloorOfShutdown(t *testing.T) {
	r := sample()
	r.add("shutdown", sysFloor, "SIGTERM → PID 1 gone, no inotify", "ms", []float64{0.6}, "")
	r.add("shutdown", sysFloor, "SIGTERM → PID 1 gone, one inotify watch", "ms", []float64{6.5}, "")
	r.add("shutdown", sysHinit, "SIGTERM → PID 1 gone, N=3", "ms", []float64{7}, "")
	md := markdown(r, "bench/results/x.json", nil)
	if want := "| shutdown | SIGTERM → PID 1 gone, N=3 | 7 ms |  |  | 6.50 ms | ≤ 3 ms | **no** |"; !strings.Contains(md, want) {
		t.Errorf("markdown lacks %q:\n%s", want, md)
	}
}

func TestCompactRuns(t *testing.T) {
	got := compactRuns([]float64{503, 1003, 2003, 4005, 4002, 4003})
	if want := "503, 1003, 2003, 4005 ×3"; got != want {
		t.Errorf("compactRuns = %q, want %q", got, want)
	}
}
