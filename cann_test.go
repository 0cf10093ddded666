package cann_test

import (
	"testing"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/acl/native"
	"github.com/stretchr/testify/require"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]cann.Mode{"": cann.Auto, "auto": cann.Auto, "NATIVE": cann.Native, " fallback ": cann.Fallback} {
		m, err := cann.ParseMode(in)
		require.NoError(t, err, in)
		require.Equal(t, want, m)
	}
	_, err := cann.ParseMode("gpu")
	require.ErrorIs(t, err, cann.ErrUnknownMode)
}

func TestOpenFallback(t *testing.T) {
	p, err := cann.Open(cann.Fallback, cann.Options{})
	require.NoError(t, err)
	require.Equal(t, cann.Fallback, p.Mode)
	require.Equal(t, "fallback", p.Backend.Name())
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "Close is idempotent")
}

func TestAutoFallsBackWhenNativeMissing(t *testing.T) {
	opt := cann.Options{Native: []native.Option{native.WithLibraryPath("/nonexistent/libascendcl.so")}}
	t.Setenv("ASCEND_HOME_PATH", t.TempDir())
	t.Setenv("ASCEND_TOOLKIT_HOME", t.TempDir())
	t.Setenv("CANN_ACL_LIB", "/nonexistent/libascendcl.so")
	p, err := cann.Open(cann.Auto, opt)
	require.NoError(t, err)
	defer p.Close()
	if p.Mode == cann.Native { // a real CANN install on the loader path
		t.Skip("native library present on the loader path:", p.Reason)
	}
	require.Equal(t, cann.Fallback, p.Mode)
	require.Contains(t, p.Reason, "native library unavailable")

	_, err = cann.Open(cann.Native, opt)
	require.Error(t, err, "native mode never silently falls back")
}

func TestOpenFromEnv(t *testing.T) {
	t.Setenv(cann.EnvBackend, "fallback")
	p, err := cann.OpenFromEnv(cann.Options{})
	require.NoError(t, err)
	require.Equal(t, cann.Fallback, p.Mode)
	require.NoError(t, p.Close())

	t.Setenv(cann.EnvBackend, "bogus")
	_, err = cann.OpenFromEnv(cann.Options{})
	require.ErrorIs(t, err, cann.ErrUnknownMode)
}
