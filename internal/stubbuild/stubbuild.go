// Package stubbuild compiles the C stub libraries that stand in for the
// vendor libraries in tests (acl/native/testdata/stub, the HCCL stub).
//
// The compiler is $CC (which may carry arguments) or the first of cc, gcc,
// clang on $PATH. With no compiler the test is skipped with a message
// saying so, unless CANN_REQUIRE_STUB=1, where it fails: CI sets it so a
// missing toolchain cannot turn the native tests silently into skips.
//
// Builds are cached: once per test binary in memory, and across runs in a
// content-addressed directory under the system temp dir (the key covers the
// compiler, the flags and every .c/.h file of the source directory), so a
// stub is compiled once per change of its sources. Build is safe for
// concurrent use.
package stubbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// EnvRequire names the variable that turns a missing compiler into a test
// failure.
const EnvRequire = "CANN_REQUIRE_STUB"

// Flags are the compiler flags every stub is built with.
var Flags = []string{"-fPIC", "-shared", "-O2", "-Wall", "-Werror", "-pthread", "-Wl,-Bsymbolic"}

// Options changes one build.
type Options struct {
	// Defines are passed as -D flags (e.g. "STUB_OMIT_REQUIRED"), so that
	// one source tree yields variants of the library.
	Defines []string
}

var (
	mu    sync.Mutex
	built = map[string]*entry{}
)

type entry struct {
	once sync.Once
	path string
	err  error
}

// Build compiles every .c file of srcDir into a shared library named
// libName and returns its path.
func Build(t testing.TB, srcDir, libName string) string {
	t.Helper()
	return BuildWith(t, srcDir, libName, Options{})
}

// BuildWith is Build with options.
func BuildWith(t testing.TB, srcDir, libName string, opt Options) string {
	t.Helper()
	cc, err := Compiler()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("stubbuild: %v (%s=1 requires the C stub)", err, EnvRequire)
		}
		t.Skipf("stubbuild: %v; skipping the tests over the C stub (set %s=1 to make this fatal)", err, EnvRequire)
	}
	abs, err := filepath.Abs(srcDir)
	if err != nil {
		t.Fatalf("stubbuild: %v", err)
	}
	key := abs + "\x00" + libName + "\x00" + strings.Join(opt.Defines, "\x00")
	mu.Lock()
	e := built[key]
	if e == nil {
		e = &entry{}
		built[key] = e
	}
	mu.Unlock()
	e.once.Do(func() { e.path, e.err = compile(cc, abs, libName, opt) })
	if e.err != nil {
		t.Fatalf("stubbuild: %v", e.err)
	}
	return e.path
}

// Compiler returns the C compiler command (program and leading arguments),
// or an error saying none was found.
func Compiler() ([]string, error) {
	if cc := strings.Fields(os.Getenv("CC")); len(cc) > 0 {
		p, err := exec.LookPath(cc[0])
		if err != nil {
			return nil, fmt.Errorf("$CC=%q not found: %v", os.Getenv("CC"), err)
		}
		return append([]string{p}, cc[1:]...), nil
	}
	for _, name := range []string{"cc", "gcc", "clang"} {
		if p, err := exec.LookPath(name); err == nil {
			return []string{p}, nil
		}
	}
	return nil, fmt.Errorf("no C compiler found ($CC unset, no cc, gcc or clang on $PATH)")
}

func compile(cc []string, srcDir, libName string, opt Options) (string, error) {
	ents, err := os.ReadDir(srcDir)
	if err != nil {
		return "", err
	}
	var srcs []string
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q\n", cc, Flags, opt.Defines, libName)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if !strings.HasSuffix(n, ".c") && !strings.HasSuffix(n, ".h") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(srcDir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
		if strings.HasSuffix(n, ".c") {
			srcs = append(srcs, filepath.Join(srcDir, n))
		}
	}
	if len(srcs) == 0 {
		return "", fmt.Errorf("no .c files in %s", srcDir)
	}
	dir := filepath.Join(os.TempDir(), "cann-go-stubs", hex.EncodeToString(h.Sum(nil))[:20])
	out := filepath.Join(dir, libName)
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Build under a unique name and rename: test binaries of several
	// packages may build the same stub at once.
	tmp, err := os.CreateTemp(dir, libName+".*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := append(append([]string{}, cc[1:]...), Flags...)
	for _, d := range opt.Defines {
		args = append(args, "-D"+d)
	}
	args = append(args, "-o", tmp.Name())
	args = append(args, srcs...)
	cmd := exec.Command(cc[0], args...)
	if outb, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", cc[0], strings.Join(args, " "), err, outb)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return out, nil
}

// Compile builds the stub outside a test (for tools such as
// ci/real-hardware's dry run), with the same cache as BuildWith.
func Compile(srcDir, libName string, opt Options) (string, error) {
	cc, err := Compiler()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(srcDir)
	if err != nil {
		return "", err
	}
	return compile(cc, abs, libName, opt)
}
