package examplecli

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann"
)

func TestResolveBackend(t *testing.T) {
	t.Setenv(cann.EnvBackend, "")
	b, err := ResolveBackend("")
	require.NoError(t, err)
	assert.Equal(t, Backend{cann.Fallback, "default"}, b)

	t.Setenv(cann.EnvBackend, "Native")
	b, err = ResolveBackend("")
	require.NoError(t, err)
	assert.Equal(t, Backend{cann.Native, "CANN_BACKEND=Native"}, b)
	b, err = ResolveBackend("auto")
	require.NoError(t, err, "the flag wins")
	assert.Equal(t, Backend{cann.Auto, "-backend auto"}, b)

	t.Setenv(cann.EnvBackend, "nonsense")
	_, err = ResolveBackend("")
	require.ErrorIs(t, err, cann.ErrUnknownMode)
	assert.ErrorContains(t, err, "CANN_BACKEND: ")
	_, err = ResolveBackend("gpu")
	require.ErrorIs(t, err, cann.ErrUnknownMode)
	assert.ErrorContains(t, err, "-backend: ")

	fb, err := Backend{cann.Auto, "-backend auto"}.FallbackOnly("p", "why")
	require.NoError(t, err)
	assert.Equal(t, cann.Fallback, fb.Mode)
	_, err = Backend{cann.Native, "-backend native"}.FallbackOnly("p", "why")
	require.ErrorIs(t, err, ErrFallbackOnly)
	assert.EqualError(t, err, "-backend native: p runs on the fallback only: why")
}

// TestOpenErrorAdvice: the library's advice names CANN_BACKEND; after a
// -backend flag it names the flag, which is what overrides.
func TestOpenErrorAdvice(t *testing.T) {
	inner := errors.New("cannot load, or pick the fallback backend (CANN_BACKEND=fallback).")
	e := &OpenError{Backend{cann.Native, "-backend native"}, inner}
	assert.Equal(t, "-backend native: cannot load, or pick the fallback backend (-backend fallback).", e.Error())
	assert.ErrorIs(t, e, inner)
	e = &OpenError{Backend{cann.Native, "CANN_BACKEND=native"}, inner}
	assert.Equal(t, "CANN_BACKEND=native: "+inner.Error(), e.Error())
}

func TestProductSum(t *testing.T) {
	p, ok := Product(3, 4, 5)
	assert.True(t, ok)
	assert.Equal(t, int64(60), p)
	_, ok = Product(math.MaxInt64/2, 3)
	assert.False(t, ok)
	_, ok = Product(2, -1)
	assert.False(t, ok)
	p, ok = Product(0, math.MaxInt64)
	assert.True(t, ok)
	assert.Zero(t, p)
	_, ok = Sum(math.MaxInt64, 1)
	assert.False(t, ok)
}

func TestWritableChecks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, []byte("keep"), 0o644))
	require.NoError(t, CheckWritableFile("o", file))
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b), "an existing file is not truncated")
	require.NoError(t, CheckWritableFile("o", filepath.Join(dir, "new")))
	assert.NoFileExists(t, filepath.Join(dir, "new"), "the probe leaves nothing behind")
	assert.ErrorIs(t, CheckWritableFile("o", filepath.Join(file, "x")), ErrUsage)
	assert.ErrorIs(t, CheckWritableFile("o", dir), ErrUsage)
	require.NoError(t, CheckWritableDir("out", filepath.Join(dir, "a", "b")))
	assert.DirExists(t, filepath.Join(dir, "a", "b"))
	assert.ErrorIs(t, CheckWritableDir("out", filepath.Join(file, "d")), ErrUsage)
	assert.ErrorIs(t, CheckReadableFile("model", dir), ErrUsage)
	assert.ErrorIs(t, CheckReadableFile("model", filepath.Join(dir, "none")), ErrUsage)
}
