package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/internal/examplecli/clitest"
)

// TestMain lets the test binary run main for clitest.
func TestMain(m *testing.M) {
	clitest.MaybeMain(main)
	os.Exit(m.Run())
}

// TestQuickstartRefusesBadFlags: each command line is refused with status
// 2 naming the problem, before the model is built: no out-of-memory crash
// for a model larger than the device, no CANN_BACKEND ignored (the old
// -backend default was "fallback" whatever CANN_BACKEND said), no stray
// argument ignored, no unwritable -deviceprofile found after all runs.
func TestQuickstartRefusesBadFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct {
		env  []string
		want string
		args []string
	}{
		{[]string{"CANN_BACKEND=nonsense"}, `CANN_BACKEND: cann: unknown backend mode "nonsense"`, nil},
		{nil, `-backend: cann: unknown backend mode "gpu"`, []string{"-backend", "gpu"}},
		{nil, `unexpected argument "300"`, []string{"-iters", "5", "300"}},
		{nil, "-iters 0: must be in [1, 1000000]", []string{"-iters", "0"}},
		{nil, "-iters -5: must be in", []string{"-iters", "-5"}},
		{nil, "-hidden 0: must be at least 1", []string{"-hidden", "0"}},
		{nil, "sizes overflow", []string{"-in", "4000000000000", "-hidden", "4000000000000"}},
		{nil, "GiB of device memory; there is 4.0 GiB free of 4.0 GiB (aclrtGetMemInfo)", []string{"-in", "1000000", "-hidden", "16000", "-iters", "1"}},
		{nil, "-deviceprofile " + file + "/p.pb", []string{"-deviceprofile", file + "/p.pb"}},
	} {
		clitest.Refused(t, c.env, c.want, c.args...)
	}
}

// TestQuickstartFollowsCANNBackend: with no -backend, CANN_BACKEND picks
// the backend (an explicit library path that does not load is then an
// error naming the variable); -backend wins over it.
func TestQuickstartFollowsCANNBackend(t *testing.T) {
	t.Setenv("CANN_ACL_LIB", filepath.Join(t.TempDir(), "libascendcl.so"))
	t.Setenv("CANN_BACKEND", "native")
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, mainCode([]string{"-iters", "2"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "CANN_BACKEND=native: ")
	out.Reset()
	errOut.Reset()
	require.Equal(t, 0, mainCode([]string{"-backend", "fallback", "-iters", "2", "-batch", "2", "-in", "8", "-out", "4"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "result: OK")
}
