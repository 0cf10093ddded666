package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/internal/stubbuild"
)

// TestDryRun runs ci/real-hardware's steps over the C stubs and checks the
// report: both suites ran with subtests passing and none failing, the
// doctor passed, and a benchmark table came out.
func TestDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suites in child processes")
	}
	if os.Getenv("CANN_REQUIRE_STUB") != "1" {
		if _, err := stubbuild.Compiler(); err != nil {
			t.Skip("no C compiler for the stubs")
		}
	}
	out := filepath.Join(t.TempDir(), "report.md")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ok, err := run(ctx, config{dryRun: true, out: out, root: filepath.Join("..", ".."), bench: "^BenchmarkPlanner$"}, io.Discard)
	require.NoError(t, err)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	md := string(b)
	t.Log(md[:min(len(md), 600)])
	assert.True(t, ok, "every step passes over the stubs")
	for _, s := range []struct {
		name string
		min  int
	}{{"ACL conformance", 50}, {"HCCL conformance", 40}} {
		m := regexp.MustCompile(`\| ` + s.name + ` \| (\d+) \| (\d+) \| (\d+) \|`).FindStringSubmatch(md)
		require.NotNil(t, m, s.name)
		pass, _ := strconv.Atoi(m[1])
		assert.Greater(t, pass, s.min, s.name)
		assert.Equal(t, "0", m[3], "%s: failures", s.name)
	}
	assert.Regexp(t, "`TestConformanceReal/[^`]+` \\| PASS", md)
	assert.Contains(t, md, "examples/doctor -backend native`: PASS")
	assert.Regexp(t, "(?m)^\\| `BenchmarkPlanner/mlp-\\d+` \\| 1 \\| \\d+ \\|", md)
}

func TestNeedsLibDir(t *testing.T) {
	_, err := run(context.Background(), config{out: filepath.Join(t.TempDir(), "r.md"), root: filepath.Join("..", "..")}, io.Discard)
	require.ErrorContains(t, err, "CANN_REAL_LIB_DIR")
}

func TestBenchTables(t *testing.T) {
	out := "goos: linux\nBenchmarkA/x=1-2 \t 10\t 100 ns/op\t 2.5 GB/s\nBenchmarkA/x=2-2 \t 5\t 300 ns/op\t 3 allocs/op\nBenchmarkB-2 1 7 ns/op\nPASS\n"
	got := benchTables(out)
	assert.Equal(t, "### BenchmarkA\n\n| benchmark | iterations | ns/op | GB/s | allocs/op |\n| --- | --- | --- | --- | --- |\n"+
		"| `BenchmarkA/x=1-2` | 10 | 100 | 2.5 |  |\n| `BenchmarkA/x=2-2` | 5 | 300 |  | 3 |\n\n"+
		"### BenchmarkB-2\n\n| benchmark | iterations | ns/op |\n| --- | --- | --- |\n| `BenchmarkB-2` | 1 | 7 |\n\n", got)
	assert.Equal(t, "no benchmark results\n", benchTables("PASS\n"))
}
