package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/google/pprof/profile"
)

// topFunc is one function of a profile: its own share (flat) and the share
// of the samples it is on the stack of (cum), in the sample unit.
type topFunc struct {
	name      string
	flat, cum int64
}

// topTable is the "top" view of one profile, as `go tool pprof -top`.
type topTable struct {
	file       string
	sampleType string // "cpu", "alloc_space"...
	unit       string // "nanoseconds", "bytes", "count"...
	total      int64
	funcs      []topFunc // the n largest by flat, then by cum
}

// readTop parses a pprof profile (gzipped protobuf as runtime/pprof writes
// it) and returns its n largest functions by flat value of the default
// sample type (the last one, as pprof does, unless the profile names it).
func readTop(r io.Reader, name string, n int) (*topTable, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if len(p.SampleType) == 0 {
		return nil, fmt.Errorf("profile %s: no sample types", name)
	}
	vi := len(p.SampleType) - 1
	for i, st := range p.SampleType {
		if st.Type == p.DefaultSampleType {
			vi = i
		}
	}
	t := &topTable{file: name, sampleType: p.SampleType[vi].Type, unit: p.SampleType[vi].Unit}

	byName := map[string]*topFunc{}
	get := func(fn string) *topFunc {
		f := byName[fn]
		if f == nil {
			f = &topFunc{name: fn}
			byName[fn] = f
		}
		return f
	}
	onStack := map[string]bool{}
	for _, s := range p.Sample {
		v := s.Value[vi]
		t.total += v
		if len(s.Location) == 0 {
			continue
		}
		get(frameNames(s.Location[0])[0]).flat += v
		// A recursive function counts once per sample in its cum.
		clear(onStack)
		for _, loc := range s.Location {
			for _, fn := range frameNames(loc) {
				if !onStack[fn] {
					onStack[fn] = true
					get(fn).cum += v
				}
			}
		}
	}
	for _, f := range byName {
		t.funcs = append(t.funcs, *f)
	}
	slices.SortFunc(t.funcs, func(a, b topFunc) int {
		return cmp.Or(cmp.Compare(b.flat, a.flat), cmp.Compare(b.cum, a.cum), cmp.Compare(a.name, b.name))
	})
	if n >= 0 && len(t.funcs) > n {
		t.funcs = t.funcs[:n]
	}
	return t, nil
}

// frameNames returns the functions of a location, the innermost inlined
// one first; an unsymbolized location is named by its address.
func frameNames(loc *profile.Location) []string {
	var out []string
	for _, l := range loc.Line {
		if l.Function != nil && l.Function.Name != "" {
			out = append(out, l.Function.Name)
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("0x%x", loc.Address))
	}
	return out
}

// formatSample writes a profile value in its unit: nanoseconds as a
// duration, bytes with binary prefixes, counts as numbers.
func formatSample(v int64, unit string) string {
	switch unit {
	case "nanoseconds":
		return formatDuration(float64(v))
	case "bytes":
		return formatBytes(float64(v))
	}
	return formatNumber(float64(v))
}
