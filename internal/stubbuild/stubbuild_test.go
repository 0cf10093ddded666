package stubbuild_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/internal/stubbuild"
)

// recorder is a testing.TB that records Skip/Fatal instead of ending the
// test, so the helper's reactions can be checked.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	panic(stop{})
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	panic(stop{})
}

// run calls f with r and turns the stop panic back into a return.
func (r *recorder) run(f func(testing.TB) string) (path string) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stop); !ok {
				panic(v)
			}
		}
	}()
	return f(r)
}

func valueOf(t *testing.T, path string) int32 {
	t.Helper()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err)
	defer purego.Dlclose(h)
	fn, err := purego.Dlsym(h, "stubbuild_value")
	require.NoError(t, err)
	r, _, _ := purego.SyscallN(fn)
	return int32(r)
}

func TestBuildAndCache(t *testing.T) {
	p := stubbuild.Build(t, "testdata/ok", "libok.so")
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular())
	assert.Equal(t, int32(7), valueOf(t, p))
	assert.Equal(t, p, stubbuild.Build(t, "testdata/ok", "libok.so"), "cached per test binary")

	v := stubbuild.BuildWith(t, "testdata/ok", "libok.so", stubbuild.Options{Defines: []string{"VALUE=42"}})
	assert.NotEqual(t, p, v, "a variant is another file")
	assert.Equal(t, int32(42), valueOf(t, v))
}

func TestCompileError(t *testing.T) {
	if _, err := stubbuild.Compiler(); err != nil {
		t.Skip("no C compiler")
	}
	r := &recorder{TB: t}
	r.run(func(tb testing.TB) string { return stubbuild.Build(tb, "testdata/bad", "libbad.so") })
	assert.True(t, r.failed)
	assert.Contains(t, r.msg, "undeclared_identifier", "the compiler output is shown")
}

func TestNoSources(t *testing.T) {
	r := &recorder{TB: t}
	r.run(func(tb testing.TB) string { return stubbuild.Build(tb, t.TempDir(), "libnone.so") })
	assert.True(t, r.failed)
	assert.Contains(t, r.msg, "no .c files")
}

func TestNoCompiler(t *testing.T) {
	t.Setenv("CC", "")
	t.Setenv("PATH", t.TempDir())
	_, err := stubbuild.Compiler()
	require.Error(t, err)

	t.Setenv(stubbuild.EnvRequire, "")
	r := &recorder{TB: t}
	r.run(func(tb testing.TB) string { return stubbuild.Build(tb, "testdata/ok", "libok.so") })
	assert.True(t, r.skipped, "skipped without a compiler")
	assert.Contains(t, r.msg, "no C compiler")

	t.Setenv(stubbuild.EnvRequire, "1")
	r = &recorder{TB: t}
	r.run(func(tb testing.TB) string { return stubbuild.Build(tb, "testdata/ok", "libok.so") })
	assert.True(t, r.failed, "fatal under CANN_REQUIRE_STUB=1")
	assert.Contains(t, r.msg, stubbuild.EnvRequire)
}

func TestCCOverride(t *testing.T) {
	t.Setenv("CC", "cann-no-such-compiler -O0")
	_, err := stubbuild.Compiler()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cann-no-such-compiler")
}
