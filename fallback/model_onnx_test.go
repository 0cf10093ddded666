package fallback

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/onnx"
)

// TestModelLoadONNX: the fallback loads ONNX bytes as it loads its own
// format: the descriptions carry the ONNX names, dims, types and sizes,
// and the model computes what NumPy computed for it (ge/onnx/testdata).
func TestModelLoadONNX(t *testing.T) {
	n := newTestNPU(t)
	blob, err := os.ReadFile("../ge/onnx/testdata/cnn.onnx")
	require.NoError(t, err)
	inPB, err := os.ReadFile("../ge/onnx/testdata/cnn_input_0.pb")
	require.NoError(t, err)
	outPB, err := os.ReadFile("../ge/onnx/testdata/cnn_output_0.pb")
	require.NoError(t, err)
	in, err := onnx.DecodeTensor(inPB)
	require.NoError(t, err)
	want, err := onnx.DecodeTensor(outPB)
	require.NoError(t, err)

	id := loadBlob(t, n, blob)
	d, err := n.CreateDesc()
	require.NoError(t, err)
	require.NoError(t, n.GetDesc(d, id))
	require.Equal(t, uintptr(1), n.GetNumInputs(d))
	require.Equal(t, uintptr(1), n.GetNumOutputs(d))
	require.Equal(t, "image", n.GetInputNameByIndex(d, 0))
	require.Equal(t, "probs", n.GetOutputNameByIndex(d, 0))
	require.Equal(t, acl.Float32, n.GetInputDataType(d, 0))
	require.Equal(t, uintptr(2*3*32*32*4), n.GetInputSizeByIndex(d, 0))
	require.Equal(t, uintptr(2*10*4), n.GetOutputSizeByIndex(d, 0))
	var dims acl.IODims
	require.NoError(t, n.GetOutputDims(d, 0, &dims))
	require.Equal(t, []int64{2, 10}, dims.Shape())
	require.NoError(t, n.DestroyDesc(d))

	ib, ob := devBytes(t, n, len(in.Data)), devBytes(t, n, len(want.Data))
	copy(ib, in.Data)
	ids, _ := newDataset(t, n, ib)
	ods, _ := newDataset(t, n, ob)
	require.NoError(t, n.Execute(id, ids, ods))
	for i := 0; i < len(want.Data); i += 4 {
		w := math.Float32frombits(binary.LittleEndian.Uint32(want.Data[i:]))
		g := math.Float32frombits(binary.LittleEndian.Uint32(ob[i:]))
		require.InDelta(t, w, g, 1e-5+1e-4*math.Abs(float64(w)), "element %d", i/4)
	}
	require.NoError(t, n.Unload(id))
}

// TestModelLoadOfflineModel: an .om file (ATC's offline model, magic
// "IMOD") is refused with an error that says what it is and what to load
// instead; an ONNX model with a symbolic dim loads with that dim unknown.
func TestModelLoadOfflineModel(t *testing.T) {
	n := newTestNPU(t)
	om := make([]byte, 512)
	copy(om, "IMOD")
	_, err := n.LoadFromMem(unsafe.Pointer(&om[0]), uintptr(len(om)))
	requireCode(t, acl.CodeGEParamInvalid, err)
	require.ErrorContains(t, err, "offline model")
	require.ErrorContains(t, err, "ONNX")

	require.Empty(t, n.loadedModels())

	// A symbolic batch dim no longer refuses the model: it loads with
	// the dim unknown (-1), as ATC keeps it (model_dynamic.go).
	blob, err := os.ReadFile("../ge/onnx/testdata/gonnx/mlp.onnx")
	require.NoError(t, err)
	id := loadBlob(t, n, blob)
	d, err := n.CreateDesc()
	require.NoError(t, err)
	require.NoError(t, n.GetDesc(d, id))
	var dims acl.IODims
	require.NoError(t, n.GetInputDims(d, 0, &dims))
	require.Equal(t, int64(-1), dims.Shape()[0])
	require.NoError(t, n.DestroyDesc(d))
	require.NoError(t, n.Unload(id))
}
