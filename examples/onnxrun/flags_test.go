package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/internal/examplecli/clitest"
)

// TestMain lets the test binary run main for clitest.
func TestMain(m *testing.M) {
	clitest.MaybeMain(main)
	os.Exit(m.Run())
}

const mlp = "../../ge/onnx/testdata/gonnx/mlp.onnx"

// TestBadFlags runs the program with command lines that cannot work:
// each is refused with exit status 2 and an error naming what is wrong,
// before any model is imported or memory allocated — never a panic (old:
// -runs -5), an out-of-memory crash (old: -batch 4000000000, -shape
// data_input=4000000000,3) or an error only after all the runs (old: an
// unwritable -deviceprofile).
func TestBadFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct {
		name string
		env  []string
		want string
		args []string
	}{
		{"no model", nil, "-model FILE.onnx is required", nil},
		{"missing model", nil, "-model nope.onnx: no such file", []string{"-model", "nope.onnx"}},
		{"negative runs", nil, "-runs -5: must be in [0, 1000000]", []string{"-model", mlp, "-runs", "-5"}},
		{"huge batch", nil, "the inputs of every -batch gear needs", []string{"-model", mlp, "-batch", "4000000000"}},
		{"huge shape", nil, "the model's inputs at these shapes (-shape, -input) needs", []string{"-model", mlp, "-shape", "data_input=4000000000,3"}},
		{"overflowing shape", nil, "overflow", []string{"-model", mlp, "-shape", "data_input=4000000000000000000,3"}},
		{"overflowing batch", nil, "-batch 4000000000000000000: the inputs' sizes overflow", []string{"-model", mlp, "-batch", "4000000000000000000"}},
		{"batch with input", nil, "-input is not supported with -batch", []string{"-model", mlp, "-batch", "1,2", "-input", "data_input=" + mlp}},
		{"repeated gear", nil, "gear 2 given twice", []string{"-model", mlp, "-batch", "2,2"}},
		{"negative dim", nil, "dim -3 is negative", []string{"-model", mlp, "-shape", "data_input=-3,3"}},
		{"zero gear", nil, "batch sizes ≥ 1", []string{"-model", mlp, "-batch", "0"}},
		{"stray argument", nil, `unexpected argument "extra"`, []string{"-model", mlp, "extra"}},
		{"unwritable out", nil, "-out " + file + "/dir", []string{"-model", mlp, "-out", file + "/dir"}},
		{"unwritable profile", nil, "-deviceprofile " + file + "/p.pb", []string{"-model", mlp, "-deviceprofile", file + "/p.pb", "-runs", "1000"}},
		{"bad input flag", nil, `-input "x": want NAME=FILE.npy`, []string{"-model", mlp, "-input", "x"}},
		{"unknown flag", nil, "flag provided but not defined: -nope", []string{"-nope"}},
		{"CANN_BACKEND nonsense", []string{"CANN_BACKEND=nonsense"}, `CANN_BACKEND: cann: unknown backend mode "nonsense"`, []string{"-model", mlp}},
		{"-backend nonsense", nil, `-backend: cann: unknown backend mode "gpu"`, []string{"-model", mlp, "-backend", "gpu"}},
		{"native", nil, "-backend native: onnxrun runs on the fallback only", []string{"-model", mlp, "-backend", "native"}},
		{"CANN_BACKEND native", []string{"CANN_BACKEND=native"}, "CANN_BACKEND=native: onnxrun runs on the fallback only", []string{"-model", mlp}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := clitest.Refused(t, c.env, c.want, c.args...)
			assert.NotContains(t, r.Stdout, "latency", "nothing ran")
		})
	}
}

// TestBackendChoice: -backend and CANN_BACKEND pick the backend (auto and
// fallback run on the fallback), and the flag wins over the variable.
func TestBackendChoice(t *testing.T) {
	for _, c := range []struct{ env, flag string }{{"", ""}, {"auto", ""}, {"fallback", ""}, {"native", "fallback"}, {"nonsense", "auto"}} {
		t.Setenv("CANN_BACKEND", c.env)
		args := []string{"-model", mlp, "-runs", "1"}
		if c.flag != "" {
			args = append(args, "-backend", c.flag)
		}
		var out, errOut bytes.Buffer
		require.Equal(t, 0, mainCode(args, &out, &errOut), "CANN_BACKEND=%s -backend %s: %s", c.env, c.flag, errOut.String())
		assert.Contains(t, out.String(), `output "preds"`)
	}
}

// TestHelp: -h exits 0 and names every value of -backend once, with no
// second "default".
func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, mainCode([]string{"-h"}, &out, &errOut))
	line := ""
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.Contains(l, "auto, native or fallback") {
			line = l
		}
	}
	require.NotEmpty(t, line, errOut.String())
	assert.Equal(t, 0, strings.Count(line, "default"), line)
}
