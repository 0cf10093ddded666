package cann_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/acl/native"
	hcclnative "github.com/ascend-go/cann/hccl/native"
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
	require.NotNil(t, p.HCCL, "HCCL is picked with ACL")
	require.Equal(t, "fallback", p.HCCL.Name())
	_, err = p.HCCL.GetRootInfo()
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "Close is idempotent")

	p, err = cann.Open(cann.Fallback, cann.Options{NoHCCL: true})
	require.NoError(t, err)
	require.Nil(t, p.HCCL)
	require.NoError(t, p.Close())
}

// noInstall hides any CANN install from the library search.
func noInstall(t *testing.T) {
	t.Setenv("ASCEND_HOME_PATH", t.TempDir())
	t.Setenv("ASCEND_TOOLKIT_HOME", t.TempDir())
	t.Setenv("CANN_ACL_LIB", "")
	t.Setenv("CANN_HCCL_LIB", "")
}

func TestAutoFallsBackWhenNativeMissing(t *testing.T) {
	noInstall(t)
	p, err := cann.Open(cann.Auto, cann.Options{})
	require.NoError(t, err)
	defer p.Close()
	if p.Mode == cann.Native { // a real CANN install on the loader path
		t.Skip("native library present on the loader path:", p.Reason)
	}
	require.Equal(t, cann.Fallback, p.Mode)
	require.Equal(t, "fallback", p.HCCL.Name(), "HCCL falls back with ACL")
	require.Contains(t, p.Reason, "native libraries unavailable")
	require.Contains(t, p.Reason, "Set ASCEND_HOME_PATH to the CANN install")

	_, err = cann.Open(cann.Native, cann.Options{})
	require.Error(t, err, "native mode never silently falls back")
	require.True(t, strings.HasSuffix(err.Error(), "or pick the fallback backend (CANN_BACKEND=fallback)."), err.Error())
}

// TestAutoHonoursExplicitLibraries: a library path set explicitly (either
// variable, or an option) that does not load is an error under auto too,
// ending with what to do, never a silent fallback.
func TestAutoHonoursExplicitLibraries(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing-here.so")
	for name, c := range map[string]struct {
		env  string
		opt  cann.Options
		want string
	}{
		"CANN_ACL_LIB":  {env: "CANN_ACL_LIB", want: "$CANN_ACL_LIB is authoritative"},
		"CANN_HCCL_LIB": {env: "CANN_HCCL_LIB", want: "$CANN_HCCL_LIB is authoritative"},
		"ACL option":    {opt: cann.Options{Native: []native.Option{native.WithLibraryPath(missing)}}, want: "The path given to Open is authoritative"},
		"HCCL option":   {opt: cann.Options{HCCLNative: []hcclnative.Option{hcclnative.WithLibraryPath(missing)}}, want: "The path given to Open is authoritative"},
	} {
		t.Run(name, func(t *testing.T) {
			noInstall(t)
			if c.env != "" {
				t.Setenv(c.env, missing)
			}
			p, err := cann.Open(cann.Auto, c.opt)
			if err == nil {
				_ = p.Close()
			}
			require.Error(t, err)
			var nf *native.NotFoundError
			require.ErrorAs(t, err, &nf)
			require.Contains(t, err.Error(), missing)
			require.Contains(t, err.Error(), c.want)
			require.True(t, strings.HasSuffix(err.Error(), "pick the fallback backend (CANN_BACKEND=fallback)."), err.Error())
		})
	}
	// NoHCCL: an HCCL path is not consulted at all.
	noInstall(t)
	t.Setenv("CANN_HCCL_LIB", missing)
	p, err := cann.Open(cann.Auto, cann.Options{NoHCCL: true})
	require.NoError(t, err)
	require.NoError(t, p.Close())
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
