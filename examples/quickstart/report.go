package main

import (
	"fmt"
	"io"
	"math"
	"time"
)

// report prints the modes side by side.
func report(w io.Writer, cfg config, rs []result) {
	fmt.Fprintf(w, "\n%d runs per mode (RunAsync + Synchronize each):\n", cfg.iters)
	fmt.Fprintf(w, "  %-18s", "")
	for _, m := range modes {
		fmt.Fprintf(w, "%14s", m.name)
	}
	fmt.Fprintln(w)
	row := func(label string, cell func(r result) string) {
		fmt.Fprintf(w, "  %-18s", label)
		for _, r := range rs {
			fmt.Fprintf(w, "%14s", cell(r))
		}
		fmt.Fprintln(w)
	}
	for _, q := range []float64{0.50, 0.90, 0.99} {
		row(fmt.Sprintf("p%.0f latency", 100*q), func(r result) string { return dur(percentile(r.lat, q)) })
	}
	row("max latency", func(r result) string { return dur(r.lat[len(r.lat)-1]) })
	row("copies/run", func(r result) string { return num(r.copies, "%.0f") })
	row("bytes copied/run", func(r result) string {
		if math.IsNaN(r.bytes) {
			return "n/a"
		}
		return size(uintptr(r.bytes))
	})
	row("max rel. error", func(r result) string { return fmt.Sprintf("%.1e", r.maxRelErr) })
	if len(rs) == 2 && len(rs[0].lat) > 0 {
		p0, p1 := percentile(rs[0].lat, 0.5), percentile(rs[1].lat, 0.5)
		if p0 > 0 {
			fmt.Fprintf(w, "  zero copy: p50 %.2f× of copy mode's\n", float64(p0)/float64(p1))
		}
	}
}

// percentile returns the q-quantile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
}

func num(v float64, format string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf(format, v)
}

func size(n uintptr) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
