package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/internal/examplecli/clitest"
)

// TestMain lets the test binary run main for clitest.
func TestMain(m *testing.M) {
	clitest.MaybeMain(main)
	os.Exit(m.Run())
}

// TestBackendChoice: the program follows -backend and CANN_BACKEND (it
// used fallback.New whatever they said): a value cann.ParseMode refuses
// is refused with status 2, as is a stray argument; a valid one runs.
func TestBackendChoice(t *testing.T) {
	clitest.Refused(t, []string{"CANN_BACKEND=nonsense"}, `unknown backend mode "nonsense"`)
	clitest.Refused(t, nil, `unknown backend mode "gpu"`, "-backend", "gpu")
	clitest.Refused(t, nil, `unexpected argument "fallback"`, "fallback")
	r := clitest.Run(t, []string{"CANN_BACKEND=fallback"})
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "[5 8 0 4]\n", r.Stdout)
	r = clitest.Run(t, []string{"CANN_BACKEND=native", "CANN_ACL_LIB=" + filepath.Join(t.TempDir(), "libascendcl.so")}, "-backend", "auto")
	require.Equal(t, 1, r.Code, "an explicit library path that does not load is an error under auto too")
	assert.Contains(t, r.Stderr, "CANN_ACL_LIB")
}

// TestREADMEPackageTable: the README's package table names every public
// package of the module (it lacked ge/gert and fallback/hcclsim/procs).
func TestREADMEPackageTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9/]+)`").FindAllStringSubmatch(string(readme), -1) {
		listed[m[1]] = true
	}
	var missing []string
	root := filepath.Join("..", "..")
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch first := strings.Split(rel, "/")[0]; {
		case strings.HasPrefix(d.Name(), ".") && rel != ".", d.Name() == "testdata", d.Name() == "internal", first == "examples", first == "ci", first == "bench", first == "docs":
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
			return filepath.SkipDir // a module of its own
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				if rel == "." {
					rel = "cann"
				}
				if !listed[rel] {
					missing = append(missing, rel)
				}
				break
			}
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(missing)
	assert.Empty(t, missing, "packages the README's table does not name")
}

// TestRun runs the README program and checks its output against relu(x·w)
// computed here in float64 from the same x and w.
func TestRun(t *testing.T) {
	x := [2][3]float64{{1, 2, 3}, {-1, 0, 1}}
	w := [3][2]float64{{1, -1}, {2, 0}, {0, 3}}
	var want []float32
	for i := range 2 {
		for j := range 2 {
			var acc float64
			for k := range 3 {
				acc += x[i][k] * w[k][j]
			}
			want = append(want, float32(max(acc, 0)))
		}
	}
	got, err := run(cann.Fallback)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// TestREADMEShowsProgram: the README's "Using it" block is this package's
// main.go from "package main" on, so the snippet compiles and runs as
// written.
func TestREADMEShowsProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	prog, err := os.ReadFile("main.go")
	require.NoError(t, err)
	s := string(readme)
	at := strings.Index(s, "## Using it")
	require.GreaterOrEqual(t, at, 0, "README has a Using it section")
	start := strings.Index(s[at:], "```go\n")
	require.GreaterOrEqual(t, start, 0)
	block := s[at+start+len("```go\n"):]
	block = block[:strings.Index(block, "```")]
	body := string(prog)
	body = body[strings.Index(body, "package main"):]
	require.Equal(t, body, block, "README snippet and examples/readme/main.go differ")
}
