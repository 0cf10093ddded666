package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	garbage := filepath.Join(dir, "garbage.txt")
	require.NoError(t, os.WriteFile(garbage, []byte("\x00\xff\xfe not a benchmark\nPASS\nok  \tpkg\t0.1s\n"+strings.Repeat("x", 60000)+"\n"), 0o644))
	longLine := filepath.Join(dir, "long.txt")
	require.NoError(t, os.WriteFile(longLine, []byte("BenchmarkA 1 5 ns/op\n"+strings.Repeat("x", 100000)+"\n"), 0o644))
	malformed := filepath.Join(dir, "malformed.txt")
	require.NoError(t, os.WriteFile(malformed, []byte("BenchmarkX 1 abc ns/op\nBenchmarkY\n"), 0o644))
	headerOnly := filepath.Join(dir, "header.txt")
	require.NoError(t, os.WriteFile(headerOnly, []byte("goos: linux\ngoarch: amd64\npkg: x\n"), 0o644))
	missing := filepath.Join(dir, "missing.txt")

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"empty", []string{empty}, "no benchmark results"},
		{"garbage", []string{garbage}, "no benchmark results"},
		{"malformed", []string{malformed}, "no benchmark results"},
		{"long line", []string{longLine}, "long.txt: a line longer than 64 KiB after 1 results"},
		{"header only", []string{headerOnly}, "no benchmark results"},
		{"missing", []string{missing}, "no such file"},
		{"good then missing", []string{captured, missing}, "no such file"},
		{"good then empty", []string{captured, empty}, "empty.txt: no benchmark results"},
		{"empty stdin", []string{"-"}, "stdin: no benchmark results"},
		{"directory", []string{dir}, "is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			var stderr bytes.Buffer
			err := run(append([]string{"-o", out}, c.args...), strings.NewReader(""), &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NoDirExists(t, out, "a bad input leaves no report behind")
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-o"},
		{"-top", "0", captured},
		{"-nosuchflag", captured},
	} {
		var stderr bytes.Buffer
		err := run(args, nil, &stderr)
		require.ErrorIs(t, err, errUsage, "%q", args)
		assert.NotEmpty(t, stderr.String(), "%q: the mistake is explained", args)
	}
	err := run([]string{"-h"}, nil, &bytes.Buffer{})
	assert.True(t, errors.Is(err, flag.ErrHelp))
}

func TestReportFromStdinAndFiles(t *testing.T) {
	data, err := os.ReadFile(captured)
	require.NoError(t, err)
	dir := t.TempDir()
	out := filepath.Join(dir, "nested", "report")
	var stderr bytes.Buffer
	// The same run from a file and from stdin: six runs per row.
	require.NoError(t, run([]string{"-o", out, captured, "-"}, bytes.NewReader(data), &stderr))
	assert.Contains(t, stderr.String(), "read "+captured+": 42 results")
	assert.Contains(t, stderr.String(), "read stdin: 42 results")
	assert.Contains(t, stderr.String(), "wrote "+filepath.Join(out, "README.md"))

	md, err := os.ReadFile(filepath.Join(out, "README.md"))
	require.NoError(t, err)
	s := string(md)
	assert.Contains(t, s, "- cpu: AMD EPYC\n")
	assert.Contains(t, s, "- pkg: github.com/ascend-go/cann/bench\n")
	assert.Contains(t, s, "(84 results)")
	assert.Contains(t, s, "\n## HCCLAllReduce\n")
	assert.Contains(t, s, "\n## HCCLBatchGet\n")
	assert.Contains(t, s, "| benchmark | runs | ns/op | MB/s | algbw\\_GB/s | busbw\\_GB/s | copy\\_GB/s | B/op | allocs/op | **x\\_copy** | **x\\_devcopy** | **xmax\\_copy** |\n")

	// The busbw cell of one row: the median and spread of its six values
	// (each run twice), from the raw numbers.
	xs := rawRuns(t, captured)["HCCLAllReduce/inproc/ranks=4/size=16MiB"]["busbw_GB/s"]
	require.Len(t, xs, 3)
	lo, hi := min(xs[0], xs[1], xs[2]), max(xs[0], xs[1], xs[2])
	med := xs[0] + xs[1] + xs[2] - lo - hi
	cell := formatNumber(med) + fmt.Sprintf(" ±%.0f%%", 100*max(hi-med, med-lo)/med)
	line := tableLine(t, s, "| inproc/ranks=4/size=16MiB | 6 |")
	cols := strings.Split(line, " | ")
	assert.Equal(t, cell, cols[5], line)
	// BatchGet's small reads report no x_copy.
	assert.True(t, strings.HasSuffix(tableLine(t, s, "| inproc/64B | 6 |"), "| — |"))
}

func tableLine(t *testing.T, md, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no table line %q", prefix)
	return ""
}

func TestFileNamesStayInOutputDir(t *testing.T) {
	for _, s := range []string{"../../etc/passwd", "/abs/path", "..", "a/b\\c", "x\x00y", ""} {
		name := fileName(s)
		assert.True(t, filepath.IsLocal(name), "%q → %q", s, name)
		assert.NotContains(t, name, "/")
		assert.NotContains(t, name, "\\")
		assert.NotEqual(t, "..", name)
	}
	assert.Equal(t, "HCCLAllReduce_busbw_GB-s", fileName("HCCLAllReduce_busbw_GB/s"))
	used := map[string]bool{}
	assert.Equal(t, "a.svg", uniqueName(used, "a", ".svg"))
	assert.Equal(t, "a-2.svg", uniqueName(used, "a", ".svg"))
	assert.Equal(t, "a-3.svg", uniqueName(used, "a", ".svg"))

	// Benchmark names with path-like parts still land in the directory.
	in := "BenchmarkEvil/../../x/size=1KiB 1 5 ns/op\nBenchmarkEvil/../../x/size=2KiB 1 6 ns/op\n"
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	require.NoError(t, run([]string{"-q", "-o", out, "-"}, strings.NewReader(in), &bytes.Buffer{}))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the output directory")
	files, err := os.ReadDir(out)
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	assert.ElementsMatch(t, []string{"README.md", "Evil_ns-op.svg"}, names)
}
