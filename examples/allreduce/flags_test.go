package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/internal/examplecli/clitest"
)

// TestAllreduceRefusesBadFlags: each command line is refused with status
// 2 naming the problem before a rank process starts: -size 100GiB ended
// in an out-of-memory crash of every rank, -iters 0 reported thousands
// of GB/s, a stray argument and CANN_BACKEND=nonsense were ignored.
// (main_test.go's TestMain runs ranks and clitest's main.)
func TestAllreduceRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
		args []string
	}{
		{nil, "a rank (-size, -rows, -row) needs 200.0 GiB of device memory; there is 4.0 GiB free", []string{"-size", "100GiB"}},
		{nil, "-size \"9000000000000GiB\": too large", []string{"-size", "9000000000000GiB"}},
		{nil, "-iters 0: must be in [1, 1000000]", []string{"-iters", "0"}},
		{nil, "-ranks 2000: must be in [1, 512]", []string{"-ranks", "2000"}},
		{nil, "-ranks 0: must be in", []string{"-ranks", "0"}},
		{nil, "the ranks together (-ranks, -size, -rows, -row) needs", []string{"-ranks", "512", "-size", "1GiB"}},
		{nil, "-row 0: must be in", []string{"-row", "0"}},
		{nil, "-timeout 0s: must be positive", []string{"-timeout", "0"}},
		{nil, `unexpected argument "4"`, []string{"-ranks", "2", "4"}},
		{[]string{"CANN_BACKEND=nonsense"}, `CANN_BACKEND: cann: unknown backend mode "nonsense"`, nil},
		{nil, "-backend native: allreduce runs on the fallback only", []string{"-backend", "native"}},
	} {
		r := clitest.Refused(t, c.env, c.want, c.args...)
		assert.NotContains(t, r.Stdout, "rank processes", "no rank started: %v", c.args)
	}
}

// TestAllreduceBackendFlag: CANN_BACKEND=fallback and -backend auto run
// the job (auto is the fallback: the ranks are fallback processes).
func TestAllreduceBackendFlag(t *testing.T) {
	t.Setenv("CANN_BACKEND", "native")
	var out, errOut bytes.Buffer
	args := []string{"-backend", "auto", "-ranks", "2", "-size", "4KiB", "-iters", "1", "-rows", "10", "-row", "64"}
	require.Equal(t, 0, mainCode(args, &out, &errOut), "%s%s", out.String(), errOut.String())
	assert.Contains(t, out.String(), "all ranks OK")
}
