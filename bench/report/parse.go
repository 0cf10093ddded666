package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// part is one element of a sub-benchmark name: key=value, or a positional
// value (empty key) such as "inproc" or "64B".
type part struct {
	key, value string
}

func (p part) String() string {
	if p.key == "" {
		return p.value
	}
	return p.key + "=" + p.value
}

// row is one sub-benchmark of a family with every run's value per unit.
type row struct {
	sub     string // name below the family, without GOMAXPROCS: "inproc/ranks=2/size=1KiB"
	procs   string // GOMAXPROCS suffix without the dash; "" when absent
	parts   []part
	samples map[string][]float64 // by unit, in the order read
}

// runs is the number of runs of the row: the most values any unit has.
func (r *row) runs() int {
	n := 0
	for _, xs := range r.samples {
		n = max(n, len(xs))
	}
	return n
}

// family is a top-level benchmark and its sub-benchmarks.
type family struct {
	pkg        string
	name       string // without the "Benchmark" prefix, as benchstat shows it
	rows       []*row
	units      []string // in the order first seen
	multiProcs bool     // rows differ in GOMAXPROCS, so labels must show it
	index      map[string]*row
}

// label is how a row is named in tables and legends.
func (f *family) label(r *row) string {
	s := r.sub
	if f.multiProcs && r.procs != "" {
		s += "-" + r.procs
	}
	if s == "" {
		return f.name
	}
	return s
}

// configValue is one file configuration key (goos, cpu, pkg, ...) with
// every distinct value it took, in the order seen.
type configValue struct {
	key    string
	values []string
}

// report is everything read from the benchmark files.
type report struct {
	config       []configValue
	families     []*family
	files        []string
	results      int // benchmark lines read
	syntaxErrors int // malformed benchmark lines skipped
	pkgs         map[string]bool

	famIndex  map[string]*family
	confIndex map[string]int
}

func newReport() *report {
	return &report{pkgs: map[string]bool{}, famIndex: map[string]*family{}, confIndex: map[string]int{}}
}

// progressEvery is how many results pass between progress lines, so long
// inputs show that work goes on.
const progressEvery = 100000

// read adds the results of one benchmark file to the report. A file with
// no benchmark result is an error: it is most likely the wrong file or a
// run that failed before its first benchmark. Malformed benchmark lines
// are counted and reported through warn, as benchstat does.
func (rep *report) read(r io.Reader, name string, progress, warn func(format string, args ...any)) error {
	br := benchfmt.NewReader(r, name)
	before := rep.results
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.Result:
			rep.add(rec)
			if n := rep.results - before; n%progressEvery == 0 {
				progress("%s: %d results so far", name, n)
			}
		case *benchfmt.SyntaxError:
			rep.syntaxErrors++
			warn("%v (skipped)", rec)
		}
	}
	if err := br.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			// benchfmt reads lines of at most 64 KiB, which benchmark
			// lines never approach.
			return fmt.Errorf("%s: a line longer than 64 KiB after %d results: not `go test -bench` output? (%w)", name, rep.results-before, err)
		}
		return fmt.Errorf("read %s: %w", name, err)
	}
	if rep.results == before {
		return fmt.Errorf("%s: no benchmark results (expected `go test -bench` output)", name)
	}
	rep.files = append(rep.files, name)
	return nil
}

func (rep *report) add(res *benchfmt.Result) {
	rep.results++
	pkg := ""
	for _, c := range res.Config {
		if !c.File {
			continue
		}
		rep.addConfig(c.Key, string(c.Value))
		if c.Key == "pkg" {
			pkg = string(c.Value)
		}
	}
	rep.pkgs[pkg] = true

	base, rawParts := res.Name.Parts()
	fkey := pkg + "\x00" + string(base)
	f := rep.famIndex[fkey]
	if f == nil {
		f = &family{pkg: pkg, name: string(base), index: map[string]*row{}}
		rep.famIndex[fkey] = f
		rep.families = append(rep.families, f)
	}

	var parts []part
	var subs []string
	procs := ""
	for _, p := range rawParts {
		s := string(p)
		switch {
		case strings.HasPrefix(s, "-"):
			procs = s[1:]
		case strings.HasPrefix(s, "/"):
			s = s[1:]
			subs = append(subs, s)
			if k, v, ok := strings.Cut(s, "="); ok {
				parts = append(parts, part{key: k, value: v})
			} else {
				parts = append(parts, part{value: s})
			}
		}
	}
	sub := strings.Join(subs, "/")
	rkey := sub + "\x00" + procs
	rw := f.index[rkey]
	if rw == nil {
		rw = &row{sub: sub, procs: procs, parts: parts, samples: map[string][]float64{}}
		for _, o := range f.rows {
			if o.sub == sub && o.procs != procs {
				f.multiProcs = true
			}
		}
		f.index[rkey] = rw
		f.rows = append(f.rows, rw)
	}
	for _, v := range res.Values {
		// The units as the benchmark wrote them (ns/op, MB/s), not the
		// base units benchfmt tidies them into (sec/op, B/s).
		unit, val := v.Unit, v.Value
		if v.OrigUnit != "" {
			unit, val = v.OrigUnit, v.OrigValue
		}
		if _, seen := rw.samples[unit]; !seen && !slices.Contains(f.units, unit) {
			f.units = append(f.units, unit)
		}
		rw.samples[unit] = append(rw.samples[unit], val)
	}
}

func (rep *report) addConfig(key, value string) {
	i, ok := rep.confIndex[key]
	if !ok {
		i = len(rep.config)
		rep.confIndex[key] = i
		rep.config = append(rep.config, configValue{key: key})
	}
	if !slices.Contains(rep.config[i].values, value) {
		rep.config[i].values = append(rep.config[i].values, value)
	}
}
