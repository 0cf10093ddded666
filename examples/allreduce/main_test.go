package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/internal/examplecli/clitest"
)

// TestMain lets the test binary serve as a rank process when the launcher
// under test re-executes it.
func TestMain(m *testing.M) {
	clitest.MaybeMain(main) // flags_test.go runs the launcher's main
	if rankEnv() {
		os.Exit(runRankFromEnv(os.Stdout))
	}
	os.Exit(m.Run())
}

// TestLaunch runs a small job on 3 rank processes (not a power of two)
// and checks every rank reported correct results.
func TestLaunch(t *testing.T) {
	var out, errOut bytes.Buffer
	cfg := config{ranks: 3, size: 3 << 20, iters: 2, rows: 5000, rowSize: 96, timeout: 30 * time.Second}
	require.NoError(t, launch(cfg, &out, &errOut), "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	s := out.String()
	t.Log("\n" + s)
	require.Equal(t, 3, strings.Count(s, "AllReduce 3 MiB:"), s)
	require.Equal(t, 6, strings.Count(s, "result OK"), s)
	require.Contains(t, s, "all ranks OK")
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"64MiB": 64 << 20, "4KiB": 4 << 10, "1024": 1024, "8B": 8} {
		got, err := parseSize(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "3", "1XB", "-4"} {
		_, err := parseSize(bad)
		require.Error(t, err, bad)
	}
}

// TestLaunchFailure: ranks that cannot finish (a 1 ms timeout leaves them
// no time to connect) make launch fail and name the failed ranks; the
// launcher must not report success.
func TestLaunchFailure(t *testing.T) {
	var out, errOut bytes.Buffer
	cfg := config{ranks: 2, size: 1 << 10, iters: 1, rows: 10, rowSize: 64, timeout: time.Millisecond}
	err := launch(cfg, &out, &errOut)
	s := out.String()
	t.Log("\n" + s + errOut.String())
	require.Error(t, err)
	require.Contains(t, err.Error(), "of 2 ranks failed")
	require.NotContains(t, s, "all ranks OK")
	require.Contains(t, s, "FAILED")
}
