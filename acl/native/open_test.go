package native_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
)

// isolate clears every variable Open consults, so the machine's own
// settings cannot leak into a test.
func isolate(t *testing.T) {
	t.Helper()
	for _, env := range []string{native.EnvLibrary, "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"} {
		t.Setenv(env, "")
	}
}

// layout copies the stub into dir under each of names.
func layout(t *testing.T, dir string, names ...string) string {
	t.Helper()
	src, err := os.ReadFile(stubLib(t))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), src, 0o755))
	}
	return dir
}

func TestOpenNotFound(t *testing.T) {
	isolate(t)
	missing := filepath.Join(t.TempDir(), "nothing-here")
	_, err := native.Open(native.WithLibraryPath(missing))
	var nf *native.NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Contains(t, err.Error(), missing)
}

func TestOpenMissingRequired(t *testing.T) {
	isolate(t)
	_, err := native.Open(native.WithLibraryPath(stubLib(t, "STUB_OMIT_REQUIRED")))
	var ms *native.MissingSymbolsError
	require.ErrorAs(t, err, &ms)
	assert.Equal(t, []string{"aclrtMemsetAsync", "aclrtGetMemInfo"}, ms.Names, "all missing symbols, in table order")
	assert.Contains(t, err.Error(), "aclrtMemsetAsync, aclrtGetMemInfo")
}

func TestOpenMissingOptional(t *testing.T) {
	isolate(t)
	s := initStub(t, "STUB_OMIT_OPTIONAL")
	s.bound(t)
	for _, name := range []string{"aclrtHostRegister", "aclrtHostUnregister", "aclrtHostGetDevicePointer", "aclrtSynchronizeStreamWithTimeout"} {
		assert.False(t, s.Has(name), name)
	}
	assert.True(t, s.Has("aclrtHostRegisterV2"))
	mem := make([]byte, 8192)
	p := unsafe.Pointer(&mem[0])
	before := s.calls()
	for op, call := range map[string]func() error{
		"aclrtHostRegister":                 func() error { _, err := s.HostRegister(p, 4096, acl.HostRegisterMapped); return err },
		"aclrtHostUnregister":               func() error { return s.HostUnregister(p) },
		"aclrtHostGetDevicePointer":         func() error { _, err := s.HostGetDevicePointer(p, 0); return err },
		"aclrtSynchronizeStreamWithTimeout": func() error { return s.SynchronizeStreamWithTimeout(0, 10) },
	} {
		err := call()
		require.Error(t, err, op)
		assert.ErrorIs(t, err, acl.ErrNotSupported, op)
		var e *acl.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, op, e.Op)
		assert.Equal(t, acl.CodeAPINotSupport, e.Code)
		assert.Contains(t, e.Msg, s.Path())
	}
	assert.Equal(t, before, s.calls(), "an absent symbol is never called")
	// The rest of the library works.
	require.NoError(t, s.SynchronizeStream(0))
}

func TestRequiredOptionalLists(t *testing.T) {
	req, opt := native.RequiredSymbols(), native.OptionalSymbols()
	assert.Contains(t, req, "aclrtMemcpyAsync")
	assert.Contains(t, opt, "aclrtHostRegister")
	assert.Len(t, append(req, opt...), 44, "one symbol per runtime Backend method and aclGetRecentErrMsg")
	seen := map[string]bool{}
	for _, n := range append(req, opt...) {
		assert.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
	}
}

func TestOpenDiscovery(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	envDir := layout(t, filepath.Join(root, "env"), native.LibACL)
	homeDir := layout(t, filepath.Join(root, "home", "lib64"), native.LibACL)
	toolkitDir := layout(t, filepath.Join(root, "toolkit", "lib64"), native.LibACL)

	opened := func() string {
		t.Helper()
		b, err := native.Open()
		require.NoError(t, err)
		defer b.Close()
		return b.Path()
	}
	t.Setenv("ASCEND_TOOLKIT_HOME", filepath.Dir(toolkitDir))
	assert.Equal(t, filepath.Join(toolkitDir, native.LibACL), opened())
	t.Setenv("ASCEND_HOME_PATH", filepath.Dir(homeDir))
	assert.Equal(t, filepath.Join(homeDir, native.LibACL), opened(), "ASCEND_HOME_PATH before ASCEND_TOOLKIT_HOME")
	t.Setenv(native.EnvLibrary, envDir)
	assert.Equal(t, filepath.Join(envDir, native.LibACL), opened(), "CANN_ACL_LIB before the CANN homes")
	file := filepath.Join(envDir, native.LibACL)
	t.Setenv(native.EnvLibrary, file)
	assert.Equal(t, file, opened(), "CANN_ACL_LIB may name the file")

	explicit := layout(t, filepath.Join(root, "explicit"), native.LibACL)
	b, err := native.Open(native.WithLibraryPath(explicit))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(explicit, native.LibACL), b.Path(), "the option before everything")
	require.NoError(t, b.Close())

	// An override that holds nothing is an error, not a fall-through.
	t.Setenv(native.EnvLibrary, t.TempDir())
	_, err = native.Open()
	var nf *native.NotFoundError
	require.ErrorAs(t, err, &nf)
}

func TestOpenSplitLayout(t *testing.T) {
	isolate(t)
	dir := layout(t, filepath.Join(t.TempDir(), "lib64"), native.LibACLRt, native.LibACLModel)
	b, err := native.Open(native.WithLibraryPath(dir))
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, filepath.Join(dir, native.LibACLRt), b.Path())
	assert.Equal(t, []string{filepath.Join(dir, native.LibACLRt), filepath.Join(dir, native.LibACLModel)}, b.Paths())
}

func TestClose(t *testing.T) {
	isolate(t)
	b, err := native.Open(native.WithLibraryPath(stubLib(t)))
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "idempotent")
	err = b.Init("")
	assert.ErrorIs(t, err, acl.ErrUninitialized)
	assert.ErrorContains(t, err, "closed")
	_, err = b.GetDevice()
	assert.Equal(t, acl.CodeUninitialize, acl.CodeOf(err))
	assert.Zero(t, b.Symbol("aclInit"))
	assert.Empty(t, b.GetSocName())
	assert.Empty(t, b.GetRecentErrMsg())
	assert.Equal(t, "native", b.Name())
}

func TestInitConfigPath(t *testing.T) {
	s := openStub(t)
	err := s.Init(filepath.Join(t.TempDir(), "missing.json"))
	assert.Equal(t, acl.CodeInvalidFile, acl.CodeOf(err))
	assert.ErrorContains(t, err, "missing.json")

	err = s.Init("bad\x00path")
	assert.ErrorIs(t, err, acl.ErrInvalidParam)

	cfg := filepath.Join(t.TempDir(), "acl.json")
	require.NoError(t, os.WriteFile(cfg, []byte("{}"), 0o644))
	require.NoError(t, s.Init(cfg))
	assert.True(t, errors.Is(s.Init(cfg), acl.ErrRepeatInit))
	require.NoError(t, s.Finalize())
}
