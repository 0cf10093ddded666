package cann_test

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The API packages and the fallback must never pull in purego: a program that
// uses only them builds fully static with CGO_ENABLED=0.
func TestAPIPackagesDoNotImportPurego(t *testing.T) {
	goTool(t)
	pkgs := []string{"./acl", "./fallback/...", "./hccl", "./ge/...", "./zerocopy/...", "./floatx"}
	var present []string
	for _, p := range pkgs {
		if out, err := exec.Command("go", "list", p).CombinedOutput(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
			present = append(present, p)
		}
	}
	require.NotEmpty(t, present)
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, present...)
	out, err := exec.Command("go", args...).CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		require.NotContains(t, dep, "purego", "an API or fallback package depends on %s", dep)
		require.NotContains(t, dep, "/native", "an API or fallback package depends on %s", dep)
	}
}

// A program using only the fallback, built with CGO_ENABLED=0, is a static
// executable: no program interpreter and no shared-library dependencies.
func TestFallbackProgramIsStatic(t *testing.T) {
	goTool(t)
	if testing.Short() {
		t.Skip("builds a program")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fbonly")
	cmd := exec.Command("go", "build", "-o", bin, "./internal/testprog/fallbackonly")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))

	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "static binary must have no program interpreter")
		require.NotEqual(t, elf.PT_DYNAMIC, p.Type, "static binary must have no dynamic section")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	require.Empty(t, libs)

	run, err := exec.Command(bin).CombinedOutput()
	require.NoError(t, err, string(run))
	require.Contains(t, string(run), "ok")
}

func goTool(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH")
	}
}

// The SDK neither requires nor imports the report tool's plotting and
// benchmark-parsing modules: bench/report is its own module, so a program
// importing the SDK gets no gonum/plot or x/perf requirement from us.
// (gonum itself lists plot in its go.mod; with module graph pruning that
// never reaches a user's go.mod, since no package we build imports it.)
func TestNoReportDependencies(t *testing.T) {
	goTool(t)
	banned := []string{"gonum.org/v1/plot", "golang.org/x/perf"}
	gomod, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	for _, b := range banned {
		require.NotContains(t, string(gomod), b+" ", "go.mod requires %s (it belongs to bench/report's module)", b)
	}
	out, err := exec.Command("go", "list", "-deps", "-test", "./...").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			require.False(t, strings.HasPrefix(dep, b), "a package of the SDK depends on %s", dep)
		}
	}
	_, err = os.Stat(filepath.Join("bench", "report", "go.mod"))
	require.NoError(t, err, "bench/report must be its own module")
}
