package main

import (
	"math"
	"slices"
)

// summary is what a table cell or a plot point shows of a unit's runs.
type summary struct {
	n                int
	median, min, max float64
}

// summarize returns the median, minimum and maximum of xs; n is 0 for no
// values.
func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	med := s[m]
	if len(s)%2 == 0 {
		med = (s[m-1] + s[m]) / 2
	}
	return summary{n: len(s), median: med, min: s[0], max: s[len(s)-1]}
}

// spreadPct is the largest distance of the minimum or the maximum from the
// median, in percent of the median (benchstat's first "±" column): 0 for
// a single run or a zero median.
func (s summary) spreadPct() float64 {
	if s.n < 2 || s.median == 0 {
		return 0
	}
	d := max(s.max-s.median, s.median-s.min)
	return 100 * d / math.Abs(s.median)
}
