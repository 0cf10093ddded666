package dl_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/internal/dl"
	"github.com/ascend-go/cann/internal/stubbuild"
)

const (
	primaryName = "libdltest_primary.so"
	altName     = "libdltest_alt.so"
	extraName   = "libdltest_extra.so"
	testEnv     = "CANN_DLTEST_LIB"
)

// fixture builds the two test libraries and lays out copies of them in
// directories standing for each location Open searches.
type fixture struct {
	primary, extra string // built files
	root           string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		primary: stubbuild.Build(t, "testdata/primary", primaryName),
		extra:   stubbuild.Build(t, "testdata/extra", extraName),
		root:    t.TempDir(),
	}
	// Open must see none of the real variables of the machine.
	for _, env := range []string{testEnv, dl.EnvAscendHome, dl.EnvToolkitHome} {
		t.Setenv(env, "")
	}
	return f
}

// dir creates root/name holding copies of the given files (dst name ←
// source path) and returns it.
func (f *fixture) dir(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	d := filepath.Join(f.root, name)
	require.NoError(t, os.MkdirAll(d, 0o755))
	for dst, src := range files {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, dst), b, 0o755))
	}
	return d
}

func spec(path string) dl.Spec {
	return dl.Spec{Family: "TEST", Names: []string{primaryName, altName}, Extras: []string{extraName}, Path: path, EnvVar: testEnv}
}

func open(t *testing.T, s dl.Spec) *dl.Library {
	t.Helper()
	l, err := dl.Open(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// callInt calls an int-returning C function without arguments.
func callInt(t *testing.T, l *dl.Library, name string) int32 {
	t.Helper()
	fn := l.Lookup(name)
	require.NotZero(t, fn, name)
	r, _, _ := purego.SyscallN(fn)
	return int32(r)
}

func TestDiscoveryOrder(t *testing.T) {
	f := newFixture(t)
	lib := map[string]string{primaryName: f.primary}
	explicit := f.dir(t, "explicit", lib)
	env := f.dir(t, "env", lib)
	home := f.dir(t, "home/lib64", lib)
	toolkit := f.dir(t, "toolkit/lib64", lib)
	t.Setenv(dl.EnvAscendHome, filepath.Dir(home))
	t.Setenv(dl.EnvToolkitHome, filepath.Dir(toolkit))
	t.Setenv(testEnv, env)

	assert.Equal(t, filepath.Join(explicit, primaryName), open(t, spec(explicit)).Path(), "explicit directory first")
	file := filepath.Join(explicit, primaryName)
	assert.Equal(t, file, open(t, spec(file)).Path(), "explicit file")
	assert.Equal(t, filepath.Join(env, primaryName), open(t, spec("")).Path(), "then the environment override")
	t.Setenv(testEnv, "")
	assert.Equal(t, filepath.Join(home, primaryName), open(t, spec("")).Path(), "then $ASCEND_HOME_PATH/lib64")
	require.NoError(t, os.Remove(filepath.Join(home, primaryName)))
	assert.Equal(t, filepath.Join(toolkit, primaryName), open(t, spec("")).Path(), "then $ASCEND_TOOLKIT_HOME/lib64")
}

func TestLoaderPath(t *testing.T) {
	newFixture(t)
	// Nothing in the search directories: the bare soname goes to the
	// loader, which finds the C library.
	l := open(t, dl.Spec{Family: "libc", Names: []string{"libcann-no-such-lib.so", "libc.so.6"}})
	assert.Equal(t, "libc.so.6", l.Path())
	assert.NotZero(t, l.Lookup("strlen"))
}

func TestAuthoritativeLocations(t *testing.T) {
	f := newFixture(t)
	home := f.dir(t, "home/lib64", map[string]string{primaryName: f.primary})
	t.Setenv(dl.EnvAscendHome, filepath.Dir(home))
	empty := f.dir(t, "empty", nil)

	for name, s := range map[string]dl.Spec{
		"option": spec(empty),
		"env":    func() dl.Spec { t.Setenv(testEnv, empty); return spec("") }(),
	} {
		_, err := dl.Open(s)
		var nf *dl.NotFoundError
		require.ErrorAs(t, err, &nf, name)
		assert.Equal(t, "TEST", nf.Family)
		require.Len(t, nf.Attempts, 2, "%s: both names tried in %s and nothing else", name, empty)
		for _, a := range nf.Attempts {
			assert.Contains(t, a.Path, empty)
		}
		assert.Contains(t, err.Error(), primaryName)
	}
}

func TestNotAnELF(t *testing.T) {
	f := newFixture(t)
	bad := filepath.Join(f.dir(t, "bad", nil), primaryName)
	require.NoError(t, os.WriteFile(bad, []byte("not a library"), 0o644))
	_, err := dl.Open(spec(bad))
	var nf *dl.NotFoundError
	require.ErrorAs(t, err, &nf)
	require.Len(t, nf.Attempts, 1)
	assert.Equal(t, bad+" (option)", nf.Attempts[0].Path)
	assert.NotContains(t, nf.Attempts[0].Err.Error(), "no such file", "the file exists; dlopen refused it")
}

func TestEmptySpec(t *testing.T) {
	_, err := dl.Open(dl.Spec{Family: "TEST"})
	assert.Error(t, err)
}

func TestSplitLayoutAndFallThrough(t *testing.T) {
	f := newFixture(t)
	// Only the second name is present, with the extra beside it.
	d := f.dir(t, "split", map[string]string{altName: f.primary, extraName: f.extra})
	l := open(t, spec(d))
	assert.Equal(t, filepath.Join(d, altName), l.Path())
	assert.Equal(t, []string{filepath.Join(d, altName), filepath.Join(d, extraName)}, l.Paths())
	assert.Equal(t, int32(1), callInt(t, l, "dl_primary_only"))
	assert.Equal(t, int32(2), callInt(t, l, "dl_extra_only"), "lookup falls through to the extra")
	assert.Equal(t, int32(1), callInt(t, l, "dl_shared"), "the primary wins")
	assert.Zero(t, l.Lookup("dl_nowhere"))
	assert.Empty(t, l.Skipped())

	// An extra next to an explicit file is found too.
	l2 := open(t, spec(filepath.Join(d, altName)))
	assert.Len(t, l2.Paths(), 2)
}

func TestBrokenExtraIsSkipped(t *testing.T) {
	f := newFixture(t)
	d := f.dir(t, "brokenextra", map[string]string{primaryName: f.primary})
	require.NoError(t, os.WriteFile(filepath.Join(d, extraName), []byte("junk"), 0o644))
	l := open(t, spec(d))
	assert.Len(t, l.Paths(), 1)
	require.Len(t, l.Skipped(), 1)
	assert.Equal(t, filepath.Join(d, extraName), l.Skipped()[0].Path)
}

func TestResolve(t *testing.T) {
	f := newFixture(t)
	l := open(t, spec(f.dir(t, "resolve", map[string]string{primaryName: f.primary, extraName: f.extra})))
	var a, b, c, d, e uintptr
	c, e = 99, 99
	err := l.Resolve([]dl.Symbol{
		{Name: "dl_primary_only", Slot: &a},
		{Name: "dl_extra_only", Slot: &b},
		{Name: "dl_missing_one", Slot: &c},
		{Name: "dl_missing_opt", Slot: &d, Optional: true},
		{Name: "dl_missing_two", Slot: &e},
	})
	var ms *dl.MissingSymbolsError
	require.ErrorAs(t, err, &ms)
	assert.Equal(t, []string{"dl_missing_one", "dl_missing_two"}, ms.Names, "every missing required symbol is named")
	assert.Contains(t, err.Error(), "dl_missing_one, dl_missing_two")
	assert.NotZero(t, a)
	assert.NotZero(t, b)
	assert.Zero(t, c)
	assert.Zero(t, d)
	assert.Zero(t, e)

	require.NoError(t, l.Resolve([]dl.Symbol{{Name: "dl_shared", Slot: &a}, {Name: "dl_missing_opt", Slot: &d, Optional: true}}))
	assert.Equal(t, l.Lookup("dl_shared"), a)
}

func TestRefcountAndClose(t *testing.T) {
	f := newFixture(t)
	l, err := dl.Open(spec(f.dir(t, "refs", map[string]string{primaryName: f.primary})))
	require.NoError(t, err)
	assert.Equal(t, 1, l.Refs())
	rel1, err := l.Acquire()
	require.NoError(t, err)
	rel2, err := l.Acquire()
	require.NoError(t, err)
	assert.Equal(t, 3, l.Refs())

	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "Close is idempotent")
	assert.Equal(t, 2, l.Refs())
	rel1()
	rel1() // idempotent
	assert.Equal(t, 1, l.Refs())
	assert.NotZero(t, l.Lookup("dl_shared"), "still loaded while a reference is held")
	rel2()
	assert.Equal(t, 0, l.Refs())
	assert.Zero(t, l.Lookup("dl_shared"), "unloaded")
	_, err = l.Acquire()
	assert.True(t, errors.Is(err, dl.ErrClosed))
	var x uintptr
	assert.ErrorIs(t, l.Resolve([]dl.Symbol{{Name: "dl_shared", Slot: &x}}), dl.ErrClosed)
}

// TestNotFoundAdvice: the message ends with what to do, naming the
// authoritative setting that failed or, after a default search, the
// variables that point at an install and the fallback.
func TestNotFoundAdvice(t *testing.T) {
	f := newFixture(t)
	empty := f.dir(t, "empty", nil)
	t.Setenv(dl.EnvAscendHome, "")
	t.Setenv(dl.EnvToolkitHome, "")

	_, err := dl.Open(spec(empty))
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(err.Error(), "The path given to Open is authoritative: point it at the library, or pick the fallback backend (CANN_BACKEND=fallback)."), err.Error())

	t.Setenv(testEnv, empty)
	_, err = dl.Open(spec(""))
	var nf *dl.NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, "$"+testEnv, nf.Authoritative)
	assert.True(t, strings.HasSuffix(err.Error(), "$"+testEnv+" is authoritative: point it at the TEST library or unset it, or pick the fallback backend (CANN_BACKEND=fallback)."), err.Error())

	t.Setenv(testEnv, "")
	_, err = dl.Open(dl.Spec{Family: "TEST", Names: []string{"libcann-no-such-lib.so"}, EnvVar: testEnv})
	require.ErrorAs(t, err, &nf)
	assert.Empty(t, nf.Authoritative)
	assert.True(t, strings.HasSuffix(err.Error(), "Set ASCEND_HOME_PATH to the CANN install (its lib64 is searched), or "+testEnv+" to the library file, or pick the fallback backend (CANN_BACKEND=fallback)."), err.Error())
}
