package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// plotFile is a plot written for one unit of a family.
type plotFile struct {
	unit, file string
}

// page is everything the Markdown report shows.
type page struct {
	rep   *report
	plots map[*family][]plotFile
	tops  []*topTable
}

// writeMarkdown writes the report: the run's configuration, one table per
// family (a row per sub-benchmark, a column per unit) with its plots, and
// the top functions of each profile.
func writeMarkdown(w io.Writer, pg *page) error {
	bw := bufio.NewWriter(w)
	rep := pg.rep
	fmt.Fprintf(bw, "# Benchmark report\n\n")
	for _, c := range rep.config {
		fmt.Fprintf(bw, "- %s: %s\n", mdEscape(c.key), mdEscape(strings.Join(c.values, ", ")))
	}
	fmt.Fprintf(bw, "- input: %s (%d results", mdEscape(strings.Join(rep.files, ", ")), rep.results)
	if rep.syntaxErrors > 0 {
		fmt.Fprintf(bw, ", %d malformed lines skipped", rep.syntaxErrors)
	}
	fmt.Fprintf(bw, ")\n\n")
	fmt.Fprintf(bw, "Each cell is the median of the runs; with several runs, ±%% is the "+
		"largest distance of the smallest or largest value from the median. "+
		"Ratio columns (in bold) compare against a baseline measured in the same run.\n")

	for _, f := range rep.families {
		fmt.Fprintf(bw, "\n## %s", mdEscape(f.name))
		if len(rep.pkgs) > 1 {
			fmt.Fprintf(bw, " (%s)", mdEscape(f.pkg))
		}
		fmt.Fprintf(bw, "\n\n")
		writeFamilyTable(bw, f)
		for _, pf := range pg.plots[f] {
			fmt.Fprintf(bw, "\n![%s %s](%s)\n", mdEscape(f.name), mdEscape(pf.unit), pf.file)
		}
	}

	for _, t := range pg.tops {
		writeTopTable(bw, t)
	}
	return bw.Flush()
}

func writeFamilyTable(w io.Writer, f *family) {
	units := orderUnits(f.units)
	fmt.Fprintf(w, "| benchmark | runs |")
	for _, u := range units {
		if isRatioUnit(u) {
			fmt.Fprintf(w, " **%s** |", mdEscape(u))
		} else {
			fmt.Fprintf(w, " %s |", mdEscape(u))
		}
	}
	fmt.Fprintf(w, "\n| --- | ---: |%s\n", strings.Repeat(" ---: |", len(units)))
	for _, r := range f.rows {
		fmt.Fprintf(w, "| %s | %d |", mdEscape(f.label(r)), r.runs())
		for _, u := range units {
			fmt.Fprintf(w, " %s |", formatCell(summarize(r.samples[u]), u))
		}
		fmt.Fprintf(w, "\n")
	}
}

// formatCell shows the median of a unit's runs and, for several runs,
// their spread; a unit the row does not report is a dash.
func formatCell(s summary, unit string) string {
	switch {
	case s.n == 0:
		return "—"
	case s.n == 1:
		return mdEscape(formatValue(s.median, unit))
	}
	return fmt.Sprintf("%s ±%.0f%%", mdEscape(formatValue(s.median, unit)), s.spreadPct())
}

func writeTopTable(w io.Writer, t *topTable) {
	fmt.Fprintf(w, "\n## Top functions: %s\n\n", mdEscape(t.file))
	fmt.Fprintf(w, "%s, %s in total; functions by their own share (flat) and "+
		"by the share of the samples they are on the stack of (cum).\n\n",
		mdEscape(t.sampleType), mdEscape(formatSample(t.total, t.unit)))
	if len(t.funcs) == 0 {
		fmt.Fprintf(w, "The profile has no samples.\n")
		return
	}
	fmt.Fprintf(w, "| # | function | flat | flat%% | cum | cum%% |\n| ---: | --- | ---: | ---: | ---: | ---: |\n")
	for i, fn := range t.funcs {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s |\n", i+1, mdEscape(fn.name),
			mdEscape(formatSample(fn.flat, t.unit)), share(fn.flat, t.total),
			mdEscape(formatSample(fn.cum, t.unit)), share(fn.cum, t.total))
	}
}

func share(v, total int64) string {
	if total == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(v)/float64(total))
}

// mdEscaper keeps names such as (*T).M or ranks_4|x from turning into
// emphasis or table columns.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `|`, `\|`,
	`[`, `\[`, `]`, `\]`, `<`, `\<`, `>`, `\>`,
)

func mdEscape(s string) string { return mdEscaper.Replace(s) }
