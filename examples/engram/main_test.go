package main

import (
	"os"
	"strings"
	"testing"
	"time"

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
