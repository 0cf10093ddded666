package main

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const captured = "testdata/hccl-inproc.txt"

// rawRuns reads benchmark lines with plain string splitting, independently
// of benchfmt: name (without "Benchmark" and GOMAXPROCS) → unit → values.
func rawRuns(t *testing.T, path string) map[string]map[string][]float64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i >= 0 {
			name = name[:i]
		}
		if out[name] == nil {
			out[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			require.NoError(t, err, sc.Text())
			out[name][fields[i+1]] = append(out[name][fields[i+1]], v)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func readFile(t *testing.T, path string) *report {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep := newReport()
	nop := func(string, ...any) {}
	require.NoError(t, rep.read(f, path, nop, nop))
	return rep
}

func TestReadCapturedRun(t *testing.T) {
	rep := readFile(t, captured)
	raw := rawRuns(t, captured)

	assert.Equal(t, 42, rep.results)
	assert.Equal(t, []string{captured}, rep.files)
	keys := make([]string, len(rep.config))
	for i, c := range rep.config {
		keys[i] = c.key
		assert.Len(t, c.values, 1, c.key)
	}
	assert.Equal(t, []string{"goos", "goarch", "pkg", "cpu"}, keys)
	assert.Equal(t, []string{"github.com/ascend-go/cann/bench"}, rep.config[2].values)

	require.Len(t, rep.families, 2)
	ar, bg := rep.families[0], rep.families[1]
	assert.Equal(t, "HCCLAllReduce", ar.name)
	assert.Equal(t, "HCCLBatchGet", bg.name)
	assert.False(t, ar.multiProcs)

	var wantAR []string
	for _, ranks := range []string{"2", "4"} {
		for _, size := range []string{"1KiB", "64KiB", "1MiB", "16MiB", "64MiB"} {
			wantAR = append(wantAR, "inproc/ranks="+ranks+"/size="+size)
		}
	}
	assert.Equal(t, wantAR, rowNames(ar))
	assert.Equal(t, []string{"inproc/64B", "inproc/160B", "inproc/64KiB", "inproc/1MiB"}, rowNames(bg))
	assert.Equal(t, []part{{value: "inproc"}, {key: "ranks", value: "4"}, {key: "size", value: "16MiB"}}, ar.rows[8].parts)
	assert.Equal(t, []string{"ns/op", "MB/s", "algbw_GB/s", "busbw_GB/s", "copy_GB/s", "x_copy", "x_devcopy", "xmax_copy", "B/op", "allocs/op"}, ar.units)
	assert.Equal(t, []string{"ns/op", "MB/s", "GB/s", "Mreads/s", "B/op", "allocs/op", "x_copy"}, bg.units)

	// Every row holds exactly the runs of the file, in the units written,
	// and its summary is their median and range.
	cells := 0
	for _, f := range rep.families {
		for _, r := range f.rows {
			want := raw[f.name+"/"+r.sub]
			require.NotNil(t, want, r.sub)
			assert.Equal(t, 3, r.runs())
			assert.Len(t, r.samples, len(want))
			for unit, xs := range want {
				require.Equal(t, xs, r.samples[unit], "%s %s", r.sub, unit)
				s := summarize(r.samples[unit])
				lo, hi := slices.Min(xs), slices.Max(xs)
				med := xs[0] + xs[1] + xs[2] - lo - hi // the middle of three
				assert.Equal(t, 3, s.n)
				assert.InDelta(t, med, s.median, 1e-9*max(1, med))
				assert.Equal(t, lo, s.min)
				assert.Equal(t, hi, s.max)
				if med != 0 {
					assert.InDelta(t, 100*max(hi-med, med-lo)/med, s.spreadPct(), 1e-9)
				}
				cells++
			}
		}
	}
	assert.Equal(t, 10*10+2*6+2*7, cells)
}

func rowNames(f *family) []string {
	var out []string
	for _, r := range f.rows {
		out = append(out, r.sub)
	}
	return out
}

func TestReadMergesFilesAndKeepsProcs(t *testing.T) {
	in1 := "goos: linux\npkg: a\nBenchmarkF/x-2 1 10 ns/op\nBenchmarkF/x-4 1 20 ns/op\nBenchmarkG 1 5 ns/op 3 copies/op\n"
	in2 := "goos: darwin\npkg: b\nBenchmarkF/x-2 1 30 ns/op\nBenchmarkBad/x-2 notanumber ns/op\n"
	rep := newReport()
	var warned []string
	nop := func(string, ...any) {}
	warn := func(f string, a ...any) { warned = append(warned, f) }
	require.NoError(t, rep.read(strings.NewReader(in1), "one", nop, warn))
	require.NoError(t, rep.read(strings.NewReader(in2), "two", nop, warn))

	assert.Equal(t, 1, rep.syntaxErrors)
	assert.Len(t, warned, 1)
	assert.Equal(t, []string{"linux", "darwin"}, rep.config[0].values)
	// Same name in another package is another family.
	require.Len(t, rep.families, 3)
	f := rep.families[0]
	assert.True(t, f.multiProcs)
	require.Len(t, f.rows, 2)
	assert.Equal(t, "x-2", f.label(f.rows[0]))
	assert.Equal(t, "x-4", f.label(f.rows[1]))
	assert.Equal(t, []float64{10}, f.rows[0].samples["ns/op"])
	g := rep.families[1]
	assert.Equal(t, "G", g.name)
	assert.Equal(t, "G", g.label(g.rows[0]), "a benchmark without sub-benchmarks is labelled by its name")
	assert.Equal(t, []float64{3}, g.rows[0].samples["copies/op"])
	assert.Equal(t, "b", rep.families[2].pkg)
	assert.Equal(t, []float64{30}, rep.families[2].rows[0].samples["ns/op"])
}
