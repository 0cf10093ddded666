package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// svgTexts parses an SVG file as XML, failing on any malformed token, and
// returns the contents of its <text> elements.
func svgTexts(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	var root string
	depth, inText := 0, false
	var cur strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, path)
		switch tk := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = tk.Name.Local
			}
			depth++
			if tk.Name.Local == "text" {
				inText = true
				cur.Reset()
			}
		case xml.EndElement:
			depth--
			if tk.Name.Local == "text" {
				inText = false
				texts = append(texts, cur.String())
			}
		case xml.CharData:
			if inText {
				cur.Write(tk)
			}
		}
	}
	assert.Equal(t, "svg", root, path)
	assert.Zero(t, depth, "%s: unclosed elements", path)
	return texts
}

// legend returns the texts that name one of the candidate series.
func legend(texts []string, isLabel func(string) bool) []string {
	var out []string
	for _, s := range texts {
		if isLabel(s) {
			out = append(out, s)
		}
	}
	return out
}

func TestPlotsOfCapturedRun(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	require.NoError(t, run([]string{"-o", dir, captured}, nil, &stderr))

	allReduce := []string{"ns/op", "MB/s", "algbw_GB/s", "busbw_GB/s", "copy_GB/s", "x_copy", "x_devcopy", "xmax_copy"}
	batchGet := []string{"ns/op", "MB/s", "GB/s", "Mreads/s", "x_copy"}
	var want []string
	for _, u := range allReduce {
		want = append(want, fileName("HCCLAllReduce_"+u)+".svg")
	}
	for _, u := range batchGet {
		want = append(want, fileName("HCCLBatchGet_"+u)+".svg")
	}
	assert.Contains(t, want, "HCCLAllReduce_busbw_GB-s.svg")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, append(slices.Clone(want), "README.md"), got, "no plot of B/op or allocs/op by default")

	isGroup := func(s string) bool { return strings.HasPrefix(s, "inproc") }
	for _, u := range allReduce {
		texts := svgTexts(t, filepath.Join(dir, fileName("HCCLAllReduce_"+u)+".svg"))
		assert.Equal(t, []string{"inproc/ranks=2", "inproc/ranks=4"}, legend(texts, isGroup), u)
		assert.Contains(t, texts, "HCCLAllReduce: "+u)
		assert.Contains(t, texts, "1KiB")
		assert.Contains(t, texts, "64MiB")
	}
	for _, u := range batchGet {
		texts := svgTexts(t, filepath.Join(dir, fileName("HCCLBatchGet_"+u)+".svg"))
		assert.Equal(t, []string{"inproc"}, legend(texts, isGroup), u)
	}

	// The report links every plot, and every link is a file written.
	md, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	links := regexp.MustCompile(`\]\(([^)]+)\)`).FindAllStringSubmatch(string(md), -1)
	var linked []string
	for _, l := range links {
		linked = append(linked, l[1])
	}
	assert.ElementsMatch(t, want, linked)
	for _, name := range want {
		assert.Contains(t, stderr.String(), "wrote "+filepath.Join(dir, name))
	}
}

func TestPlotGroupsAndUnitSelection(t *testing.T) {
	in := `goos: linux
BenchmarkCopy/h2d/bytes=1024-2 1 100 ns/op 1.5 GB/s 0.5 x_copy 10 B/op 1 allocs/op
BenchmarkCopy/h2d/bytes=1024-2 1 120 ns/op 1.4 GB/s 0.4 x_copy 10 B/op 1 allocs/op
BenchmarkCopy/h2d/bytes=65536-2 1 900 ns/op 9.5 GB/s 0.8 x_copy 10 B/op 1 allocs/op
BenchmarkCopy/d2h/bytes=1024-2 1 110 ns/op 1.2 GB/s 0.45 x_copy 10 B/op 1 allocs/op
BenchmarkCopy/d2h/bytes=65536-2 1 950 ns/op 9.0 GB/s 0.7 x_copy 10 B/op 1 allocs/op
BenchmarkCopy/pinned/h2d/bytes=1024-2 1 90 ns/op 2.0 GB/s 0.6 x_copy 10 B/op 1 allocs/op
BenchmarkCopy/pinned/h2d/bytes=65536-2 1 800 ns/op 11 GB/s 0.9 x_copy 10 B/op 1 allocs/op
BenchmarkRead/64B-2 1 5 ns/op 3 Mreads/s
BenchmarkRead/1MiB-2 1 500 ns/op 0.01 Mreads/s
BenchmarkOne/size=1KiB-2 1 5 ns/op
BenchmarkZero/size=0-2 1 5 ns/op
BenchmarkZero/size=1KiB-2 1 7 ns/op
BenchmarkNoSize/ranks=2-2 1 5 ns/op
BenchmarkNoSize/ranks=4-2 1 6 ns/op
`
	rep := newReport()
	nop := func(string, ...any) {}
	require.NoError(t, rep.read(strings.NewReader(in), "in", nop, nop))
	byName := map[string]*family{}
	for _, f := range rep.families {
		byName[f.name] = f
	}
	assert.True(t, plottable(byName["Copy"]))
	assert.True(t, plottable(byName["Read"]))
	assert.False(t, plottable(byName["One"]), "a single size is no axis")
	assert.False(t, plottable(byName["Zero"]), "a zero size has no place on a log axis")
	assert.False(t, plottable(byName["NoSize"]))

	ss := seriesOf(byName["Copy"], "GB/s")
	require.Len(t, ss, 3)
	assert.Equal(t, "h2d", ss[0].label)
	assert.Equal(t, "d2h", ss[1].label)
	assert.Equal(t, "pinned/h2d", ss[2].label)
	require.Len(t, ss[0].points, 2)
	assert.Equal(t, 1024.0, ss[0].points[0].size)
	assert.Equal(t, summary{n: 2, median: 1.45, min: 1.4, max: 1.5}, ss[0].points[0].s)
	assert.Equal(t, []string{"ns/op", "GB/s", "x_copy"}, plotUnits(byName["Copy"], nil))
	assert.Equal(t, []string{"allocs/op", "x_copy"}, plotUnits(byName["Copy"], []string{"allocs/op", "x_copy"}))

	dir := t.TempDir()
	var stderr bytes.Buffer
	require.NoError(t, run([]string{"-q", "-o", dir, "-units", "x_copy,Mreads/s", "-units", "bogus/op", "-"}, strings.NewReader(in), &stderr))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, []string{"README.md", "Copy_x_copy.svg", "Read_Mreads-s.svg"}, got)
	assert.Contains(t, stderr.String(), "bogus/op")
	assert.NotContains(t, stderr.String(), "wrote", "-q silences progress")

	texts := svgTexts(t, filepath.Join(dir, "Copy_x_copy.svg"))
	isGroup := func(s string) bool { return s == "h2d" || s == "d2h" || s == "pinned/h2d" }
	assert.Equal(t, []string{"h2d", "d2h", "pinned/h2d"}, legend(texts, isGroup))
	texts = svgTexts(t, filepath.Join(dir, "Read_Mreads-s.svg"))
	assert.Equal(t, []string{"Read"}, legend(texts, func(s string) bool { return s == "Read" }),
		"a family whose only other part is the size is one series named after it")
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range logTicks(0.013, 8.5) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5"}, labels)
	labels = nil
	for _, tk := range logTicks(2e6, 3e8) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"2M", "5M", "10M", "20M", "50M", "100M", "200M"}, labels)
	labels = nil
	for _, tk := range logTicks(0.001, 100) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"0.001", "0.01", "0.1", "1", "10", "100"}, labels, "wide ranges label decades only")
}
