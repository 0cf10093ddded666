package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/hccl"
)

// TestMain lets the test binary serve as a rank process when the launcher
// under test re-executes it (the launch environment names the rank).
func TestMain(m *testing.M) {
	if os.Getenv(hccl.EnvRankID) != "" {
		os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func run(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	code = mainCode(args, &o, &e)
	t.Log("\n" + o.String() + e.String())
	return code, o.String(), e.String()
}

// TestLaunch runs every testdata table (2 and 4 ranks, versions 1.0 and
// 1.2) and checks every rank reported each result correct.
func TestLaunch(t *testing.T) {
	for _, tc := range []struct {
		file  string
		ranks int
	}{{"v1.0-2ranks.json", 2}, {"v1.0-4ranks.json", 4}, {"v1.2-2ranks.json", 2}, {"v1.2-4ranks.json", 4}} {
		t.Run(tc.file, func(t *testing.T) {
			code, out, _ := run(t, "-ranktable", filepath.Join("testdata", tc.file), "-count", "4099", "-timeout", "30s")
			require.Equal(t, 0, code)
			require.Equal(t, tc.ranks, strings.Count(out, "AllReduce of 4099 fp32: OK"), out)
			require.Equal(t, tc.ranks, strings.Count(out, "AllGather of 1024 int32 per rank: OK"), out)
			require.Equal(t, tc.ranks, strings.Count(out, "rows from rank"), out)
			require.Contains(t, out, "cluster: all ranks OK")
		})
	}
}

// TestLaunchOneServer launches the ranks of one server of a two-server
// table: they wait for the others, which never come, and fail with
// HCCL_E_TIMEOUT within the connect timeout.
func TestLaunchOneServer(t *testing.T) {
	code, out, _ := run(t, "-ranktable", "testdata/v1.0-4ranks.json", "-server", "10.0.0.2", "-timeout", "1s")
	require.Equal(t, 1, code)
	require.Contains(t, out, "launching 2 here")
	require.Equal(t, 2, strings.Count(out, "HCCL_E_TIMEOUT"), out)
}

// TestKillRank kills rank 2 of 4 once it joined: every other rank fails
// naming the lost rank, with one of the two codes the device gives for a
// dead peer (docs/misuse.md, "Where failures surface"): HCCL_E_TIMEOUT at
// the first collective's call when rank 2 died before calling it, 507048
// at the synchronize when it died after; the launcher exits non-zero.
func TestKillRank(t *testing.T) {
	code, out, _ := run(t, "-ranktable", "testdata/v1.0-4ranks.json", "-kill-rank", "2", "-timeout", "3s")
	require.Equal(t, 1, code)
	require.Contains(t, out, "rank 2: killed by the launcher")
	lost := regexp.MustCompile(`(?m)^rank ([013]): FAIL: (HcclAllReduce: HCCL_E_TIMEOUT \(9\)|AllReduce: aclrtSynchronizeStream: ACL_ERROR_RT_FFTS_PLUS_TIMEOUT \(507048\)).*rank 2 was lost$`)
	require.Len(t, lost.FindAllString(out, -1), 3, out)
	require.NotContains(t, out, "all ranks OK")
}

// TestInitializing: a table whose status stays "initializing" fails after
// the timeout, naming the file and the status.
func TestInitializing(t *testing.T) {
	start := time.Now()
	code, _, errOut := run(t, "-ranktable", "testdata/initializing.json", "-timeout", "500ms")
	require.Equal(t, 1, code)
	require.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond)
	require.Contains(t, errOut, "HCCL_E_TIMEOUT")
	require.Contains(t, errOut, "testdata/initializing.json")
	require.Contains(t, errOut, `status is still "initializing"`)
}

// TestInitializingThenCompleted: a scheduler rewrites the table to
// "completed" while the launcher waits; the job then runs.
func TestInitializingThenCompleted(t *testing.T) {
	src, err := os.ReadFile("testdata/v1.0-2ranks.json")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "hccl.json")
	require.NoError(t, os.WriteFile(path, bytes.Replace(src, []byte(`"completed"`), []byte(`"initializing"`), 1), 0o644))
	go func() {
		time.Sleep(300 * time.Millisecond)
		tmp := path + ".tmp.json"
		_ = os.WriteFile(tmp, src, 0o644)
		_ = os.Rename(tmp, path)
	}()
	code, out, _ := run(t, "-ranktable", path, "-timeout", "20s")
	require.Equal(t, 0, code)
	require.Contains(t, out, "all ranks OK")
}

// TestFlags: bad command lines are usage errors (status 2) before any
// process starts.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-ranktable", "testdata/absent.json"},
		{"-ranktable", "testdata/v1.0-2ranks.json", "-count", "0"},
		{"-ranktable", "testdata/v1.0-2ranks.json", "-timeout", "0s"},
		{"-ranktable", "testdata/v1.0-2ranks.json", "stray"},
		{"-kill-rank", "1"},
	} {
		code, _, errOut := run(t, args...)
		require.Equal(t, 2, code, "%q: %s", args, errOut)
	}
}
