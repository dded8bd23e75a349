package bench

import (
	"math"
	"slices"
)

// summary is what a row reports of its samples.
type summary struct {
	median, min, max float64
	n                int
}

// summarize computes the median (the mean of the middle two for an even
// count), min and max of samples.
func summarize(samples []float64) summary {
	if len(samples) == 0 {
		return summary{median: math.NaN(), min: math.NaN(), max: math.NaN()}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return summary{median: med, min: s[0], max: s[n-1], n: n}
}
