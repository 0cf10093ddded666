package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/internal/engramjob"
)

func TestMain(m *testing.M) {
	if engramjob.IsRank() {
		os.Exit(engramjob.ServeRank(os.Stdout))
	}
	os.Exit(m.Run())
}

func TestRun(t *testing.T) {
	var out, errOut strings.Builder
	job := engramjob.Job{Ranks: 3, Entries: 1000, Hidden: 64, DType: engram.BF16, T: 2000, Zipf: 1.05, Iters: 2, Seed: 3, Timeout: time.Minute}
	require.NoError(t, run(job, &out, &errOut), "stderr:\n%s", errOut.String())
	t.Log("\n" + out.String())
	require.Equal(t, 3, strings.Count(out.String(), "every byte OK"))
	require.Contains(t, out.String(), "all ranks OK")
}

func TestRunTrain(t *testing.T) {
	var out, errOut strings.Builder
	job := engramjob.Job{Ranks: 2, Entries: 500, Hidden: 16, DType: engram.FP16, T: 1500, Zipf: 1.05, Iters: 2, Seed: 5, Timeout: time.Minute, Train: true}
	require.NoError(t, run(job, &out, &errOut), "stderr:\n%s", errOut.String())
	t.Log("\n" + out.String())
	require.Contains(t, out.String(), "training fetch + FetchGrad")
	require.Equal(t, 2, strings.Count(out.String(), "every byte OK"))
}

func TestRunCache(t *testing.T) {
	var out, errOut strings.Builder
	job := engramjob.Job{Ranks: 2, Entries: 2000, Hidden: 32, DType: engram.BF16, T: 2000, Zipf: 1.05, Iters: 3, Seed: 6, Timeout: time.Minute, Cache: 200}
	require.NoError(t, run(job, &out, &errOut), "stderr:\n%s", errOut.String())
	t.Log("\n" + out.String())
	require.Equal(t, 2, strings.Count(out.String(), "cache hits"))
	require.Equal(t, 2, strings.Count(out.String(), "every byte OK"))
}

// Every flag is checked before anything is allocated or started (issue
// 24 item 7): on c5af455 -t -1 panicked, -ranks 2000 started 2000
// processes before refusing, -train -cache 100 and stray arguments were
// accepted and ignored, and sizes were not compared with any memory.
// parse never launches: an error here means nothing ran.
func TestParseRefuses(t *testing.T) {
	for _, k := range []struct {
		args []string
		want string
	}{
		{[]string{"-t", "-1"}, "-t -1: indices per fetch"},
		{[]string{"-ranks", "2000"}, "-ranks 2000: want 2 to 1024"},
		{[]string{"-ranks", "1"}, "-ranks 1: want 2 to 1024"},
		{[]string{"-train", "-cache", "100"}, "-cache 100 with -train: the cache serves inference fetches only"},
		{[]string{"-ranks", "2", "extra"}, `unexpected argument "extra"`},
		{[]string{"-iters", "-3"}, "-iters -3"},
		{[]string{"-entries", "-5"}, "-entries -5"},
		{[]string{"-hidden", "0"}, "hidden 0"},
		{[]string{"-zipf", "-1"}, "-zipf -1:"},
		{[]string{"-zipf", "NaN"}, "-zipf NaN:"},
		{[]string{"-bad", "1.5"}, "-bad 1.5:"},
		{[]string{"-cache", "-1"}, "-cache -1:"},
		{[]string{"-timeout", "0s"}, "-timeout 0s:"},
		{[]string{"-dtype", "int8"}, `-dtype "int8"`},
		{[]string{"-dtype", "fp8_e4m3", "-sf", "fp16"}, `-sf "fp16"`},
		{[]string{"-dtype", "bf16", "-sf", "e8m0"}, "-dtype bf16 has no scale factors"},
		{[]string{"-dtype", "fp8_e5m2", "-sfpacks", "70000", "-sf", "e8m0"}, "scale factors of 70000 bytes per row exceed 65535"},
		{[]string{"-policy", "ignore"}, `-policy "ignore"`},
		{[]string{"-train", "-zerocopy=false"}, "-zerocopy=false is not accepted"},
		// Sizes: a rank's output rows beyond the device memory the
		// backend reports (4 GiB), and a table beyond this machine.
		{[]string{"-t", "16777216", "-hidden", "1280"}, "more than the 4.0 GiB a device of the backend reports"},
		{[]string{"-ranks", "2", "-entries", "1000000000", "-hidden", "1280"}, "more than this machine's"},
		{[]string{"-ranks", "4", "-entries", "1000000000"}, "exceeds INT32_MAX"},
	} {
		var errOut strings.Builder
		_, err := parse(k.args, &errOut)
		require.Error(t, err, "%v", k.args)
		assert.Contains(t, err.Error()+errOut.String(), k.want, "%v", k.args)
	}
}

func TestParseDefaults(t *testing.T) {
	var errOut strings.Builder
	job, err := parse([]string{"-dtype", "fp8_e4m3", "-hidden", "100", "-sf", "e8m0", "-policy", "zero-fill", "-bad", "0.01"}, &errOut)
	require.NoError(t, err)
	assert.Equal(t, engram.FP8E4M3, job.DType)
	assert.Equal(t, 4, job.SFPacks, "ceil(100/32) packs by default")
	assert.Equal(t, engram.SFE8M0, job.SFType)
	assert.Equal(t, engram.IndexZeroFill, job.Policy)
	job, err = parse([]string{"-train", "-hidden", "1280", "-ranks", "8"}, &errOut)
	require.NoError(t, err)
	assert.True(t, job.ZeroCopyStorage(), "training storage is zero copy")
}

// Every mode from the example's flags, verified by the ranks against the
// gather: fp8 rows with scale factors, both policies with out-of-range
// indices, inference and training.
func TestRunEveryMode(t *testing.T) {
	for _, args := range [][]string{
		{"-ranks", "3", "-dtype", "fp8_e4m3", "-sf", "e8m0", "-policy", "zero-fill", "-bad", "0.02"},
		{"-ranks", "2", "-dtype", "fp8_e5m2", "-sf", "fp32", "-sfpacks", "3", "-train", "-zipf", "1"},
		{"-ranks", "2", "-dtype", "fp16", "-policy", "error", "-bad", "0.01", "-zipf", "0.7"},
		{"-ranks", "2", "-dtype", "bf16", "-policy", "zero-fill", "-bad", "0.05", "-train"},
	} {
		var out, errOut strings.Builder
		job, err := parse(append([]string{"-entries", "600", "-hidden", "40", "-t", "1500", "-iters", "1"}, args...), &errOut)
		require.NoError(t, err, "%v", args)
		job.Seed = 9
		require.NoError(t, run(job, &out, &errOut), "%v\nstderr:\n%s", args, errOut.String())
		require.Equal(t, job.Ranks, strings.Count(out.String(), "every byte OK"), "%v\n%s", args, out.String())
		if job.Bad > 0 {
			assert.Contains(t, out.String(), map[engram.IndexPolicy]string{engram.IndexZeroFill: "rows zero-filled", engram.IndexError: "bad indices refused"}[job.Policy])
		}
	}
}

// -zipf s prints rank 0's hit distribution beside the law's.
func TestRunPrintsZipfHits(t *testing.T) {
	var out, errOut strings.Builder
	job := engramjob.Job{Ranks: 2, Entries: 5000, Hidden: 8, DType: engram.BF16, T: 20000, Zipf: 1, Iters: 1, Seed: 4, Timeout: time.Minute}
	require.NoError(t, run(job, &out, &errOut), "stderr:\n%s", errOut.String())
	require.Contains(t, out.String(), "share of the most fetched rows")
	require.Contains(t, out.String(), "top    1:")
	// A degenerate draw (every index one row) would show 100% here.
	require.NotContains(t, out.String(), "top    1: 100.00%")
}

// -train -hidden 1280 (2560-byte rows) at W = 2, 4, 8 with the default
// 16,384 indices: on c5af455 every rank's fallback got device memory for
// inference only and the training fetch failed with aclrtMalloc 207001;
// now it is sized from the job.
func TestRunTrainHidden1280(t *testing.T) {
	for _, w := range []string{"2", "4", "8"} {
		var out, errOut strings.Builder
		job, err := parse([]string{"-train", "-hidden", "1280", "-ranks", w, "-entries", "4096", "-iters", "0"}, &errOut)
		require.NoError(t, err)
		require.NoError(t, run(job, &out, &errOut), "W %s\nstderr:\n%s", w, errOut.String())
		require.Equal(t, job.Ranks, strings.Count(out.String(), "every byte OK"), "W %s", w)
	}
}
