package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	aclnative "github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/internal/examplecli/clitest"
)

// TestMain lets the test binary run main for clitest.
func TestMain(m *testing.M) {
	clitest.MaybeMain(main)
	os.Exit(m.Run())
}

// TestDoctorBadFlags: a command line doctor cannot use is refused before
// any library loads, with status 2 and the flag or variable named
// (CANN_BACKEND=nonsense was silently the fallback's default before only
// because doctor read it; stray arguments were ignored).
func TestDoctorBadFlags(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
		args []string
	}{
		{[]string{"CANN_BACKEND=nonsense"}, `CANN_BACKEND: cann: unknown backend mode "nonsense"`, nil},
		{nil, `-backend: cann: unknown backend mode "gpu"`, []string{"-backend", "gpu"}},
		{nil, `unexpected argument "native"`, []string{"-backend", "fallback", "native"}},
		{nil, "-timeout 0s: must be positive", []string{"-timeout", "0"}},
		{nil, "-model nope.om: no such file", []string{"-model", "nope.om"}},
	} {
		clitest.Refused(t, c.env, c.want, c.args...)
	}
}

// TestDoctorHelp: -h names the values of -backend and says "default" at
// most once per flag (it said it twice: the usage text and the flag
// package's own).
func TestDoctorHelp(t *testing.T) {
	t.Setenv("CANN_BACKEND", "fallback")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, mainCode([]string{"-h"}, &out, &errOut))
	help := errOut.String()
	t.Log("\n" + help)
	require.Contains(t, help, "auto, native or fallback")
	for _, entry := range strings.Split(help, "\n  -")[1:] {
		assert.LessOrEqual(t, strings.Count(entry, "default"), 1, entry)
	}
}

// TestDoctorTipNamesTheFlag: when -backend native chose the native
// library and it does not load, the error starts with that choice and its
// advice is -backend fallback (CANN_BACKEND=fallback would not override
// the flag); when CANN_BACKEND chose, the advice stays the variable.
func TestDoctorTipNamesTheFlag(t *testing.T) {
	t.Setenv(aclnative.EnvLibrary, filepath.Join(t.TempDir(), "libascendcl.so"))
	err := run(context.Background(), config{backend: "native"}, &strings.Builder{})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "-backend native: "), err.Error())
	assert.Contains(t, err.Error(), "(-backend fallback)")
	assert.NotContains(t, err.Error(), "CANN_BACKEND=fallback")

	t.Setenv("CANN_BACKEND", "native")
	err = run(context.Background(), config{}, &strings.Builder{})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "CANN_BACKEND=native: "), err.Error())
	assert.Contains(t, err.Error(), "(CANN_BACKEND=fallback)")
}

// TestDoctorOneSoc: on the fallback the SoC doctor reports is the one the
// HCCL fallback models (it reported Ascend910B1 beside an HCCL model of
// Ascend910_9391).
func TestDoctorOneSoc(t *testing.T) {
	out, err := doctor(t, "fallback")
	require.NoError(t, err)
	assert.Contains(t, out, "soc: "+hcclsim.DefaultSocName+"\n")
}
