package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spinReportProfile burns CPU so that a profile has a function of the
// test's own to find.
//
//go:noinline
func spinReportProfile(d time.Duration) uint64 {
	var x uint64 = 1
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 10000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

const spinName = "github.com/ascend-go/cann/bench/report.spinReportProfile"

// cpuProfile writes a CPU profile of the busy loop into dir.
func cpuProfile(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "cpu.prof")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, pprof.StartCPUProfile(f))
	sink := spinReportProfile(time.Second)
	pprof.StopCPUProfile()
	require.NoError(t, f.Close())
	t.Logf("spin result %d", sink)
	return path
}

func TestTopOfCPUProfile(t *testing.T) {
	dir := t.TempDir()
	path := cpuProfile(t, dir)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	top, err := readTop(f, "cpu.prof", 5)
	require.NoError(t, err)
	assert.Equal(t, "cpu", top.sampleType)
	assert.Equal(t, "nanoseconds", top.unit)
	require.NotEmpty(t, top.funcs)
	assert.LessOrEqual(t, len(top.funcs), 5)
	assert.Positive(t, top.total)

	var spin *topFunc
	for i := range top.funcs {
		fn := &top.funcs[i]
		assert.LessOrEqual(t, fn.flat, fn.cum, fn.name)
		assert.LessOrEqual(t, fn.cum, top.total, fn.name)
		if i > 0 {
			assert.GreaterOrEqual(t, top.funcs[i-1].flat, fn.flat, "sorted by flat")
		}
		if fn.name == spinName {
			spin = fn
		}
	}
	require.NotNil(t, spin, "the busy function is among the top 5: %+v", top.funcs)
	// The loop is the test's only work while profiling: most of the
	// samples are on its stack, whatever time.Now takes of them.
	assert.Greater(t, float64(spin.cum), 0.5*float64(top.total))
	assert.Positive(t, spin.flat)

	// Through the command: the report's table names it.
	out := filepath.Join(dir, "out")
	var stderr bytes.Buffer
	require.NoError(t, run([]string{"-o", out, "-profile", path, "-top", "3", captured}, nil, &stderr))
	md, err := os.ReadFile(filepath.Join(out, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Top functions: "+mdEscape(path))
	assert.Contains(t, string(md), mdEscape(spinName))
	_, section, ok := strings.Cut(string(md), "## Top functions")
	require.True(t, ok)
	rows := regexp.MustCompile(`(?m)^\| [0-9]+ \|`).FindAllString(section, -1)
	assert.NotEmpty(t, rows)
	assert.LessOrEqual(t, len(rows), 3, "-top 3 lists at most three functions")
	assert.Contains(t, stderr.String(), "read "+path+": cpu profile")
}

func TestProfileBadInput(t *testing.T) {
	_, err := readTop(strings.NewReader("not a profile at all"), "junk.prof", 10)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "junk.prof")
	_, err = readTop(strings.NewReader(""), "empty.prof", 10)
	require.Error(t, err)

	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.prof")
	require.NoError(t, os.WriteFile(junk, []byte("\x1f\x8b garbage"), 0o644))
	out := filepath.Join(dir, "out")
	err = run([]string{"-q", "-o", out, "-profile", junk, captured}, nil, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "junk.prof")
	err = run([]string{"-q", "-o", out, "-profile", filepath.Join(dir, "missing.prof"), captured}, nil, &bytes.Buffer{})
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.NoDirExists(t, out, "nothing is written when an input is bad")
}
