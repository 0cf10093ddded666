package main

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"golang.org/x/perf/benchunit"
)

// Unit classes, in the order their columns appear in a table: time first,
// then the other measures (bandwidths, rates, counts), then allocations,
// then the ratios against an in-run baseline, which are what a reader
// compares across machines.
const (
	classTime = iota
	classOther
	classAlloc
	classRatio
)

func unitClass(u string) int {
	switch {
	case u == "ns/op" || u == "sec/op":
		return classTime
	case isAllocUnit(u):
		return classAlloc
	case isRatioUnit(u):
		return classRatio
	}
	return classOther
}

// isAllocUnit reports whether u is one of the allocation units of
// b.ReportAllocs.
func isAllocUnit(u string) bool {
	return u == "B/op" || u == "allocs/op"
}

// ratioUnit matches the project's dimensionless ratios against a baseline
// (x_copy, xmax_copy, x_raw...) and *_ratio units such as fm_ratio.
var ratioUnit = regexp.MustCompile(`^(x[a-z]*_[A-Za-z0-9_]+|[A-Za-z0-9_]+_ratio)$`)

// isRatioUnit reports whether u is a ratio against a baseline.
func isRatioUnit(u string) bool { return ratioUnit.MatchString(u) }

// orderUnits sorts units by class and keeps the order of first appearance
// within a class.
func orderUnits(units []string) []string {
	out := slices.Clone(units)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(unitClass(a), unitClass(b)) })
	return out
}

// formatValue writes v in unit u compactly: times as durations, bytes per
// op with binary prefixes, other values with four significant digits.
func formatValue(v float64, u string) string {
	switch {
	case u == "ns/op":
		return formatDuration(v)
	case u == "sec/op":
		return formatDuration(v * 1e9)
	case u == "B/op":
		return formatBytes(v)
	}
	return formatNumber(v)
}

// formatBytes shows a byte count with a binary prefix: 262.5KiB.
func formatBytes(v float64) string {
	if math.Abs(v) < 1024 {
		return formatNumber(v) + "B"
	}
	return benchunit.Scale(v, benchunit.Binary) + "B"
}

// formatNumber shows four significant digits, without an exponent for
// values people read as plain numbers.
func formatNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case a < 1e7 && v == math.Trunc(v):
		// Counts (allocs/op, copies/op) read as integers.
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1e-4 && a < 1e4:
		digits := max(0, 3-int(math.Floor(math.Log10(a))))
		return strconv.FormatFloat(v, 'f', digits, 64)
	case a >= 1e4 && a < 1e7:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return benchunit.Scale(v, benchunit.Decimal)
}

// formatDuration shows nanoseconds with the unit that keeps three or four
// significant digits.
func formatDuration(ns float64) string {
	a := math.Abs(ns)
	switch {
	case a >= float64(time.Second):
		return fmt.Sprintf("%.4gs", ns/1e9)
	case a >= float64(time.Millisecond):
		return fmt.Sprintf("%.4gms", ns/1e6)
	case a >= float64(time.Microsecond):
		return fmt.Sprintf("%.4gµs", ns/1e3)
	}
	return fmt.Sprintf("%.4gns", ns)
}
