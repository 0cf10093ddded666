// Command report turns saved `go test -bench` output into a Markdown
// report with tables, SVG plots and the top functions of CPU profiles:
//
//	go test ./bench -run '^$' -bench . -count 5 -cpuprofile cpu.prof | tee bench.txt
//	cd bench/report && go run . -o ../../bench-report -profile ../../cpu.prof ../../bench.txt
//
// It is its own module (bench/report/go.mod), so its plotting and parsing
// dependencies stay out of the SDK's module graph.
//
// Usage:
//
//	report [-o DIR] [-units U1,U2] [-profile FILE]... [-top N] [-q] FILE...
//
// FILE is benchmark output (several runs from -count are summarized; "-"
// reads standard input). The report is DIR/README.md (default
// bench-report/README.md) with:
//
//   - the configuration of the run (goos, goarch, pkg, cpu);
//   - one table per benchmark family (top-level benchmark), a row per
//     sub-benchmark, a column per unit (time first, ratios such as x_copy
//     last and in bold), each cell the median of the runs ± the largest
//     distance of the smallest or largest run from it;
//   - for every family whose sub-benchmarks name a size (size=16MiB,
//     bytes=65536, or a part such as 64B or 1MiB), one SVG plot per unit:
//     size on a log2 axis, one line per combination of the other parts of
//     the name (inproc/ranks=2), error bars spanning the runs. -units picks
//     the units (default: all but B/op and allocs/op);
//   - for each -profile, the top -top functions by flat and cumulative
//     share.
//
// Progress goes to standard error (-q silences it). The tool writes only
// inside DIR. An input that cannot be read or has no benchmark results is
// an error (exit status 1).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

func main() {
	err := run(os.Args[1:], os.Stdin, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		os.Exit(1)
	}
}

// errUsage marks command-line mistakes, already explained on stderr.
var errUsage = errors.New("usage")

// listFlag collects a flag that may be repeated or comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// run is the whole command, with its inputs and outputs as arguments so
// tests drive it as a user does.
func run(args []string, stdin io.Reader, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "bench-report", "output `dir`ectory (README.md and the plots)")
	var units, profiles listFlag
	fs.Var(&units, "units", "comma-separated `units` to plot (default: all but B/op and allocs/op)")
	fs.Var(&profiles, "profile", "pprof `file` whose top functions to list (repeatable)")
	top := fs.Int("top", 20, "functions per profile table")
	quiet := fs.Bool("q", false, "no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: report [flags] FILE... (- for stdin)\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	if *top < 1 {
		fmt.Fprintf(stderr, "report: -top must be at least 1\n")
		return errUsage
	}
	progress := func(format string, args ...any) {
		if !*quiet {
			fmt.Fprintf(stderr, format+"\n", args...)
		}
	}
	warn := func(format string, args ...any) { fmt.Fprintf(stderr, "warning: "+format+"\n", args...) }

	// Read everything before writing anything, so a bad input leaves no
	// half-written report behind.
	rep := newReport()
	for _, name := range fs.Args() {
		if err := readInput(rep, name, stdin, progress, warn); err != nil {
			return err
		}
	}
	pg := &page{rep: rep, plots: map[*family][]plotFile{}}
	for _, name := range profiles {
		t, err := readProfile(name, *top)
		if err != nil {
			return err
		}
		progress("read %s: %s profile, %d functions listed", name, t.sampleType, len(t.funcs))
		pg.tops = append(pg.tops, t)
	}

	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	// Every file goes through root, which refuses names that would leave
	// the output directory.
	root, err := os.OpenRoot(*out)
	if err != nil {
		return err
	}
	defer root.Close()

	var selected []string
	if len(units) > 0 {
		selected = units
	}
	used := map[string]bool{"README.md": true}
	plotted := map[string]bool{}
	for _, f := range rep.families {
		if !plottable(f) {
			continue
		}
		for _, u := range plotUnits(f, selected) {
			var buf bytes.Buffer
			if err := writePlot(&buf, f.name+": "+u, u, seriesOf(f, u)); err != nil {
				return err
			}
			name := uniqueName(used, fileName(f.name+"_"+u), ".svg")
			if err := root.WriteFile(name, buf.Bytes(), 0o644); err != nil {
				return err
			}
			progress("wrote %s", filepath.Join(*out, name))
			pg.plots[f] = append(pg.plots[f], plotFile{unit: u, file: name})
			plotted[u] = true
		}
	}
	for _, u := range selected {
		if !plotted[u] {
			warn("-units %s: no family reports it against a size; not plotted", u)
		}
	}

	var md bytes.Buffer
	if err := writeMarkdown(&md, pg); err != nil {
		return err
	}
	if err := root.WriteFile("README.md", md.Bytes(), 0o644); err != nil {
		return err
	}
	progress("wrote %s (%d families, %d plots, %d profiles)", filepath.Join(*out, "README.md"), len(rep.families), countPlots(pg), len(pg.tops))
	return nil
}

func readInput(rep *report, name string, stdin io.Reader, progress, warn func(string, ...any)) error {
	r := stdin
	label := name
	if name == "-" {
		label = "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	before := rep.results
	if err := rep.read(r, label, progress, warn); err != nil {
		return err
	}
	progress("read %s: %d results, %d families so far", label, rep.results-before, len(rep.families))
	return nil
}

func readProfile(name string, top int) (*topTable, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readTop(f, name, top)
}

// unsafeChars are replaced in file names, so a unit such as busbw_GB/s
// names a file in the output directory, not a subdirectory.
var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

func fileName(s string) string {
	s = strings.Trim(unsafeChars.ReplaceAllString(s, "-"), ".-")
	if s == "" {
		s = "plot"
	}
	return s
}

// uniqueName adds -2, -3... to base until the name is not taken.
func uniqueName(used map[string]bool, base, ext string) string {
	name := base + ext
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s-%d%s", base, i, ext)
	}
	used[name] = true
	return name
}

func countPlots(pg *page) int {
	n := 0
	for _, ps := range pg.plots {
		n += len(ps)
	}
	return n
}
