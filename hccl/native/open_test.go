package native_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/native"
)

func TestOpenNotFound(t *testing.T) {
	_, err := native.Open(native.WithLibraryPath(filepath.Join(t.TempDir(), "nope")))
	var nf *native.NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Contains(t, err.Error(), "HCCL")

	// An override that loads nothing is authoritative: no silent fallback.
	t.Setenv(native.EnvLibrary, t.TempDir())
	_, err = native.Open()
	require.ErrorAs(t, err, &nf)
}

func TestOpenEnvOverride(t *testing.T) {
	lib := stubLib(t)
	t.Setenv(native.EnvLibrary, filepath.Dir(lib))
	b, err := native.Open()
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, lib, b.Path())
	assert.Equal(t, "native", b.Name())
}

func TestOpenMissingRequired(t *testing.T) {
	_, err := native.Open(native.WithLibraryPath(stubLib(t, "STUB_OMIT_REQUIRED")))
	var ms *native.MissingSymbolsError
	require.ErrorAs(t, err, &ms)
	assert.Equal(t, []string{"HcclAllReduce"}, ms.Names)
}

// A library without the one-sided service: the methods report
// ErrNotSupported instead of crashing.
func TestOptionalSymbolsMissing(t *testing.T) {
	b := openStub(t, "STUB_NO_ONESIDED")
	for _, name := range []string{"HcclRegisterMem", "HcclBatchGet", "HcclCommRegister"} {
		assert.False(t, b.Has(name), name)
	}
	assert.True(t, b.Has("HcclAllReduce"))
	root, err := b.GetRootInfo()
	require.NoError(t, err)
	c, err := b.CommInitRootInfo(1, &root, 0)
	require.NoError(t, err)
	defer b.CommDestroy(c)
	var x [64]byte
	_, err = b.RegisterMem(c, 0, hccl.MemDevice, unsafe.Pointer(&x), 64)
	require.ErrorIs(t, err, hccl.ErrNotSupported)
	assert.Equal(t, hccl.ENotSupport, hccl.ResultOf(err))
	assert.Contains(t, err.Error(), "HcclRegisterMem")
	assert.ErrorIs(t, b.BatchGet(c, 0, nil, 0), hccl.ErrNotSupported)
	_, err = b.ExchangeMemDesc(c, 0, nil, 0, nil)
	assert.ErrorIs(t, err, hccl.ErrNotSupported)
	_, err = b.CommRegister(c, unsafe.Pointer(&x), 64, 0)
	assert.ErrorIs(t, err, hccl.ErrNotSupported)
}

// Newer CANN moved functions to libhcomm.so: a symbol missing from
// libhccl.so is looked up in libhcomm.so beside it.
func TestSplitLibraries(t *testing.T) {
	dir := linkDir(t, map[string]string{
		native.LibHCCL:  stubLib(t, "STUB_NO_ONESIDED"),
		native.LibHComm: stubLib(t),
	})
	b, err := native.Open(native.WithLibraryPath(dir))
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, []string{filepath.Join(dir, native.LibHCCL), filepath.Join(dir, native.LibHComm)}, b.Paths())
	assert.True(t, b.Has("HcclRegisterMem"), "resolved from libhcomm.so")

	// The two files are separate instances: a communicator of libhccl.so
	// is unknown to libhcomm.so's one-sided service, which proves the call
	// reached libhcomm.so.
	root, err := b.GetRootInfo()
	require.NoError(t, err)
	c, err := b.CommInitRootInfo(1, &root, 0)
	require.NoError(t, err)
	defer b.CommDestroy(c)
	var x [64]byte
	_, err = b.RegisterMem(c, 0, hccl.MemDevice, unsafe.Pointer(&x), 64)
	assert.Equal(t, hccl.EPara, hccl.ResultOf(err))

	// libhcomm.so alone is a valid primary library too.
	dir2 := linkDir(t, map[string]string{native.LibHComm: stubLib(t)})
	b2, err := native.Open(native.WithLibraryPath(dir2))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir2, native.LibHComm), b2.Path())
	require.NoError(t, b2.Close())
}

func TestClosedBackend(t *testing.T) {
	b, err := native.Open(native.WithLibraryPath(stubLib(t)))
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close is idempotent")
	_, err = b.GetRootInfo()
	assert.Equal(t, hccl.EUnavail, hccl.ResultOf(err))
	assert.ErrorIs(t, b.Barrier(1, 0), hccl.ErrUnavailable)
	assert.Zero(t, b.Symbol("HcclAllReduce"))
	assert.False(t, b.Has("HcclAllReduce"))
	assert.Equal(t, "HCCL_E_PARA", b.ErrorString(hccl.EPara))
}

func TestErrorString(t *testing.T) {
	b := openStub(t)
	assert.Equal(t, "parameter error", b.ErrorString(hccl.EPara))
	assert.Equal(t, "timeout", b.ErrorString(hccl.ETimeout))
}

func TestStringArguments(t *testing.T) {
	b := openStub(t)
	_, err := b.CommInitClusterInfo("a\x00b", 0)
	assert.ErrorIs(t, err, hccl.ErrPara)
	_, err = b.CommInitClusterInfo(filepath.Join(t.TempDir(), "missing.json"), 0)
	assert.Equal(t, hccl.EPara, hccl.ResultOf(err))
	empty := filepath.Join(t.TempDir(), "empty.json")
	require.NoError(t, os.WriteFile(empty, []byte("{}"), 0o644))
	// A table without "status" is HCCL_E_NOT_FOUND, as HCCL's parser
	// gives (docs/misuse.md, "Rank tables").
	_, err = b.CommInitClusterInfo(empty, 0)
	assert.Equal(t, hccl.ENotFound, hccl.ResultOf(err))
	_, err = b.CommInitClusterInfoConfig("a\x00b", 0, hccl.NewCommConfig())
	assert.ErrorIs(t, err, hccl.ErrPara)
}

// The live count the conformance suite relies on does count: a
// communicator, a registration and a window show, and destroy clears them.
func TestLiveCount(t *testing.T) {
	b := openStub(t)
	env := &stubEnv{t: t, b: b}
	before := env.Live()
	root, err := b.GetRootInfo()
	require.NoError(t, err)
	c, err := b.CommInitRootInfo(1, &root, 0)
	require.NoError(t, err)
	assert.Greater(t, env.Live(), before)
	mem := &plainRank{}
	defer mem.Close()
	x, err := mem.Alloc(64)
	require.NoError(t, err)
	_, err = b.CommRegister(c, x, 64, 0)
	require.NoError(t, err)
	withWin := env.Live()
	require.NoError(t, b.CommDestroy(c))
	assert.Equal(t, before, env.Live())
	assert.Greater(t, withWin, before+1)
	assert.True(t, errors.Is(b.CommDestroy(c), hccl.ErrPara))
}
