package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
	assert.NotContains(t, md, "(no message)", "every FAIL and SKIP says why")
	assert.Regexp(t, "(?m)^\\| `BenchmarkPlanner/mlp-\\d+` \\| 1 \\| \\d+ \\|", md)
}

func TestNeedsLibDir(t *testing.T) {
	_, err := run(context.Background(), config{out: filepath.Join(t.TempDir(), "r.md"), root: filepath.Join("..", "..")}, io.Discard)
	require.ErrorContains(t, err, "CANN_REAL_LIB_DIR")
}

// TestLibDirCheckedFirst: a library directory that does not exist or
// holds no loadable ACL library is refused before any step runs, naming
// the flag or variable that gave it (it used to run every suite for
// minutes and then exit 1).
func TestLibDirCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		cfg  config
		want []string
	}{
		{config{libDir: filepath.Join(dir, "nope"), libDirFrom: "-lib-dir"}, []string{"-lib-dir " + filepath.Join(dir, "nope"), "no such file"}},
		{config{libDir: dir, libDirFrom: "CANN_REAL_LIB_DIR"}, []string{"CANN_REAL_LIB_DIR " + dir, "cannot load the ACL library"}},
	} {
		c.cfg.out, c.cfg.root = filepath.Join(dir, "r.md"), filepath.Join("..", "..")
		var log strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := run(ctx, c.cfg, &log)
		cancel()
		require.Error(t, err)
		for _, w := range c.want {
			assert.Contains(t, err.Error(), w)
		}
		assert.Empty(t, log.String(), "no step ran")
		assert.NoFileExists(t, c.cfg.out)
	}
}

// TestReportMessages: the report gives every FAIL and SKIP the test's own
// message (it gave the status only), and go test's bookkeeping lines are
// not part of it.
func TestReportMessages(t *testing.T) {
	raw := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA/skips"}`,
		`{"Action":"output","Package":"p","Test":"TestA/skips","Output":"=== RUN   TestA/skips\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA/skips","Output":"    suite.go:12: no second device: | one\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA/skips","Output":"--- SKIP: TestA/skips (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestA/skips","Elapsed":0}`,
		`{"Action":"output","Package":"p","Test":"TestA/fails","Output":"    suite.go:40: HcclAllReduce: HCCL_E_PARA (1)\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA/fails","Output":"--- FAIL: TestA/fails (0.01s)\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestA/fails","Elapsed":0.01}`,
		`{"Action":"output","Package":"p","Test":"TestA/passes","Output":"    suite.go:50: a log line\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA/passes","Elapsed":0.5}`,
		`{"Action":"fail","Package":"p","Test":"TestA/silent","Elapsed":0}`,
	}, "\n")
	res, out := parseTestJSON([]byte(raw))
	require.Len(t, res, 4)
	assert.Contains(t, out, "--- FAIL: TestA/fails")
	assert.Equal(t, "suite.go:12: no second device: | one", res[0].msg)
	assert.Equal(t, "suite.go:40: HcclAllReduce: HCCL_E_PARA (1)", res[1].msg)
	md := resultTable(res)
	assert.Contains(t, md, "| `TestA/skips` | SKIP | 0.00 | suite.go:12: no second device: \\| one |\n")
	assert.Contains(t, md, "| `TestA/fails` | FAIL | 0.01 | suite.go:40: HcclAllReduce: HCCL_E_PARA (1) |\n")
	assert.Contains(t, md, "| `TestA/passes` | PASS | 0.50 |  |\n")
	assert.Contains(t, md, "| `TestA/silent` | FAIL | 0.00 | (no message) |\n")
}

func TestBenchTables(t *testing.T) {
	out := "goos: linux\nBenchmarkA/x=1-2 \t 10\t 100 ns/op\t 2.5 GB/s\nBenchmarkA/x=2-2 \t 5\t 300 ns/op\t 3 allocs/op\nBenchmarkB-2 1 7 ns/op\nPASS\n"
	got := benchTables(out)
	assert.Equal(t, "### BenchmarkA\n\n| benchmark | iterations | ns/op | GB/s | allocs/op |\n| --- | --- | --- | --- | --- |\n"+
		"| `BenchmarkA/x=1-2` | 10 | 100 | 2.5 |  |\n| `BenchmarkA/x=2-2` | 5 | 300 |  | 3 |\n\n"+
		"### BenchmarkB-2\n\n| benchmark | iterations | ns/op |\n| --- | --- | --- |\n| `BenchmarkB-2` | 1 | 7 |\n\n", got)
	assert.Equal(t, "no benchmark results\n", benchTables("PASS\n"))
}
