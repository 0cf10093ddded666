package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/ge/onnx"
)

// TestRunCNN feeds the CNN test model its NumPy input as a .npy file and
// checks the .npy output against NumPy's result (ge/onnx/testdata).
func TestRunCNN(t *testing.T) {
	dir := t.TempDir()
	read := func(p string) ([]byte, []int64) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		h, err := onnx.DecodeTensor(b)
		require.NoError(t, err)
		return h.Data, h.Desc.Dims
	}
	in, dims := read("../../ge/onnx/testdata/cnn_input_0.pb")
	want, _ := read("../../ge/onnx/testdata/cnn_output_0.pb")
	var buf bytes.Buffer
	require.NoError(t, writeNpy(&buf, 0, dims, in)) // 0: acl.Float32
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.npy"), buf.Bytes(), 0o644))
	var out bytes.Buffer
	cfg := config{model: "../../ge/onnx/testdata/cnn.onnx", inputs: multi{"image=" + filepath.Join(dir, "x.npy")}, out: dir, seed: 1, runs: 3,
		deviceProfile: filepath.Join(dir, "dev.pb.gz")}
	require.NoError(t, run(cfg, &out))
	pf, err := os.Open(cfg.deviceProfile)
	require.NoError(t, err)
	prof, err := profile.Parse(pf)
	require.NoError(t, pf.Close())
	require.NoError(t, err)
	var tasks int64
	for _, s := range prof.Sample {
		tasks += s.Value[0]
	}
	// 10 ops; the compiler fuses Conv → BatchNorm → Relu, Conv → Relu and
	// Gemm into single tasks.
	require.Equal(t, int64(3*6), tasks, "3 timed runs of the 6 tasks")
	require.Contains(t, out.String(), `output "probs"`)
	require.Contains(t, out.String(), "Conv")
	require.Contains(t, out.String(), "p99")
	_, gotDims, got, err := readNpy(filepath.Join(dir, "probs.npy"))
	require.NoError(t, err)
	require.Equal(t, []int64{2, 10}, gotDims)
	for i := 0; i < len(want); i += 4 {
		w := math.Float32frombits(binary.LittleEndian.Uint32(want[i:]))
		g := math.Float32frombits(binary.LittleEndian.Uint32(got[i:]))
		require.InDelta(t, w, g, 1e-5+1e-4*math.Abs(float64(w)))
	}
	// Wrong inputs are refused with what is wrong.
	cfg.inputs = multi{"nope=" + filepath.Join(dir, "x.npy")}
	require.ErrorContains(t, run(cfg, &out), "no such input")
}

// TestRunBatch imports the gonnx MLP (symbolic batch) with gears and runs
// each; the outputs of a gear are that gear's rows.
func TestRunBatch(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	cfg := config{model: "../../ge/onnx/testdata/gonnx/mlp.onnx", batch: "3,1", out: dir, seed: 1, runs: 2}
	require.NoError(t, run(cfg, &out))
	require.Contains(t, out.String(), "gears [1 3]")
	require.Contains(t, out.String(), `batch 3   output "preds"              float[3 2]`)
	_, dims, _, err := readNpy(filepath.Join(dir, "preds_b1.npy"))
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, dims)
	cfg.batch = "0"
	require.ErrorContains(t, run(cfg, &out), "batch sizes ≥ 1")
	cfg.batch, cfg.model = "1,2", "../../ge/onnx/testdata/cnn.onnx"
	require.ErrorContains(t, run(cfg, &out), "fixed batch dim")
}

// TestRunSymbolicShapes: the gonnx MLP has a symbolic batch. With an
// -input file the batch is the file's; with neither -input nor -shape it
// is 1 and the run says so; -shape still fixes it.
func TestRunSymbolicShapes(t *testing.T) {
	dir := t.TempDir()
	model := "../../ge/onnx/testdata/gonnx/mlp.onnx"
	var out bytes.Buffer
	require.NoError(t, run(config{model: model, out: dir, seed: 1, runs: 1}, &out))
	require.Contains(t, out.String(), `input "data_input": symbolic dim 0 (batch_size) set to 1`)
	require.Contains(t, out.String(), "-shape data_input=D,...")
	_, dims, _, err := readNpy(filepath.Join(dir, "preds.npy"))
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, dims)

	x := make([]byte, 5*3*4)
	for i := 0; i < len(x); i += 4 {
		binary.LittleEndian.PutUint32(x[i:], math.Float32bits(float32(i%7)-3))
	}
	var buf bytes.Buffer
	require.NoError(t, writeNpy(&buf, 0, []int64{5, 3}, x))
	in := filepath.Join(dir, "x.npy")
	require.NoError(t, os.WriteFile(in, buf.Bytes(), 0o644))
	out.Reset()
	require.NoError(t, run(config{model: model, inputs: multi{"data_input=" + in}, out: dir, seed: 1, runs: 1}, &out))
	require.NotContains(t, out.String(), "set to 1")
	_, dims, _, err = readNpy(filepath.Join(dir, "preds.npy"))
	require.NoError(t, err)
	require.Equal(t, []int64{5, 2}, dims)

	out.Reset()
	require.NoError(t, run(config{model: model, shapes: multi{"data_input=3,3"}, out: dir, seed: 1, runs: 1}, &out))
	_, dims, _, err = readNpy(filepath.Join(dir, "preds.npy"))
	require.NoError(t, err)
	require.Equal(t, []int64{3, 2}, dims)
	err = run(config{model: model, inputs: multi{"data_input=" + in}, shapes: multi{"data_input=3,3"}, seed: 1, runs: 1}, &out)
	require.ErrorContains(t, err, "-input data_input", "a file that disagrees with -shape")
	err = run(config{model: model, shapes: multi{"data_input=3,4"}, seed: 1, runs: 1}, &out)
	require.ErrorContains(t, err, "-shape data_input", "a fixed dim -shape contradicts")
	require.NotContains(t, err.Error(), "WithInputShape")
}
