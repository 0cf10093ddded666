package onnx_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
)

// TestValueDependentOpsWithConstantInputs: the ops whose output shape
// depends on input values import and compute the backend tests' outputs
// once every input is a constant (WithInputValue), the way run-time
// evaluation imports them; without that they are refused as dynamic.
func TestValueDependentOpsWithConstantInputs(t *testing.T) {
	testDataOrSkip(t)
	for _, name := range []string{
		"test_nonzero_example",
		"test_unique_not_sorted_without_axis", "test_unique_sorted_with_axis", "test_unique_sorted_with_axis_3d",
		"test_unique_sorted_with_negative_axis", "test_unique_sorted_without_axis",
		"test_compress_0", "test_compress_1", "test_compress_default_axis", "test_compress_negative_axis",
		"test_onehot_negative_indices", "test_onehot_with_axis", "test_onehot_with_negative_axis", "test_onehot_without_axis",
		"test_top_k", "test_top_k_negative_axis", "test_top_k_smallest",
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(testDataDir, "node", name)
			data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
			require.NoError(t, err)
			set := filepath.Join(dir, "test_data_set_0")
			inFiles, _ := filepath.Glob(filepath.Join(set, "input_*.pb"))
			outFiles, _ := filepath.Glob(filepath.Join(set, "output_*.pb"))
			sort.Slice(outFiles, func(i, j int) bool { return fileIndex(outFiles[i]) < fileIndex(outFiles[j]) })
			var opts []onnx.Option
			for _, f := range inFiles {
				tp, h := readTensor(t, f)
				opts = append(opts, onnx.WithInputValue(tp.GetName(), h))
			}
			m, err := onnx.Compile(data, opts...)
			require.NoError(t, err)
			outs, err := getest.Run(m, nil)
			require.NoError(t, err)
			require.Len(t, outs, len(outFiles))
			for j, f := range outFiles {
				_, want := readTensor(t, f)
				d := m.Outputs[j]
				require.Equal(t, want.Desc.DataType, d.DataType, "output %d", j)
				require.Equal(t, want.Desc.Dims, d.Dims, "output %d", j)
				require.Empty(t, compareTensor(d.DataType, outs[j], want.Data), "output %d", j)
			}
		})
	}
}

// TestValueDependentOpsRefuseComputedInputs: a computed input that fixes
// an output shape is ErrDynamicShape.
func TestValueDependentOpsRefuseComputedInputs(t *testing.T) {
	testDataOrSkip(t)
	for _, name := range []string{"test_nonzero_example", "test_unique_sorted_without_axis", "test_compress_0", "test_onehot_with_axis"} {
		data, err := os.ReadFile(filepath.Join(testDataDir, "node", name, "model.onnx"))
		require.NoError(t, err)
		_, err = onnx.Compile(data)
		require.ErrorIs(t, err, onnx.ErrDynamicShape, name)
		require.NotEqual(t, acl.Code(0), acl.CodeOf(err))
	}
}
