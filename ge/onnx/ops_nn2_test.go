package onnx_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNNAgainstONNXRuntime runs single-node models of the nn family's
// features the official backend data (ONNX 1.12) does not cover: Resize
// 10/18/19 (antialias, axes, keep_aspect_ratio_policy,
// half_pixel_symmetric), Upsample 7/9, GridSample 20 (3-D, every padding
// mode), AffineGrid, LpPool, GlobalLpPool, GroupNormalization 18/21,
// LpNormalization,
// RoiAlign max and opset 10, integer and indexed MaxPool, dilated
// AveragePool, BatchNormalization training_mode, LayerNormalization's
// Mean/InvStdDev, 1-D/3-D Conv, ConvTranspose output_shape/SAME_LOWER/
// groups, MaxUnpool with pads, InstanceNormalization, LRN, MVN and
// NonMaxSuppression with a score threshold. testdata/nn_ort/gen.py
// builds the models; the expected outputs are onnxruntime 1.30's
// (run.js, a dev tool), converted to the backend test layout by prep.py.
func TestNNAgainstONNXRuntime(t *testing.T) {
	dirs, err := filepath.Glob("testdata/nn_ort/test_*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, d := range dirs {
		r := runBackendTest(t, "nn_ort", d)
		require.Equal(t, "pass", r.status, "%s (%s): %s", r.name, r.ops, r.reason)
	}
}
