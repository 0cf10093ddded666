package fallback

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/onnx"
)

// TestDeviceProfile: with WithDeviceProfile every task of every execution
// is recorded under its model, op name, op type and stream, and the
// profile parses as pprof with one sample per (op, stream); without the
// option there is no profile.
func TestDeviceProfile(t *testing.T) {
	n := newTestNPU(t, WithDeviceProfile())
	blob, err := os.ReadFile("../ge/onnx/testdata/cnn.onnx")
	require.NoError(t, err)
	m, err := onnx.Compile(blob)
	require.NoError(t, err)
	id := loadBlob(t, n, blob)
	ib, ob := devBytes(t, n, int(m.Inputs[0].Size)), devBytes(t, n, int(m.Outputs[0].Size))
	in, _ := newDataset(t, n, ib)
	out, _ := newDataset(t, n, ob)
	const syncRuns, asyncRuns = 3, 2
	for range syncRuns {
		require.NoError(t, n.Execute(id, in, out))
	}
	// One model id runs either synchronously or asynchronously (GE's
	// "NnExecute not support mix execute"): the async runs use a second load.
	id2 := loadBlob(t, n, blob)
	s := mkStream(t, n)
	for range asyncRuns {
		runAsync(t, n, id2, in, out, s)
	}
	var buf bytes.Buffer
	require.NoError(t, n.WriteDeviceProfile(&buf))
	p, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.Equal(t, "device_time", p.SampleType[1].Type)
	perStream := map[string]int64{}
	ops := map[string]bool{}
	var total int64
	for _, smp := range p.Sample {
		require.Len(t, smp.Location, 4, "op, op type, model, stream")
		require.Equal(t, []string{m.Name}, smp.Label["model"])
		perStream[smp.Label["stream"][0]] += smp.Value[0]
		ops[smp.Label["op_type"][0]+"/"+smp.Label["op"][0]] = true
		total += smp.Value[1]
	}
	require.Len(t, ops, len(m.Tasks), "one entry per task")
	require.Equal(t, int64(syncRuns*len(m.Tasks)), perStream["synchronous execute"])
	var async int64
	for k, v := range perStream {
		if k != "synchronous execute" {
			async += v
		}
	}
	require.Equal(t, int64(asyncRuns*len(m.Tasks)), async)
	require.Positive(t, total)
	for _, tk := range m.Tasks {
		require.True(t, ops[tk.Op.String()+"/"+tk.Name], "task %q", tk.Name)
	}

	n.ResetDeviceProfile()
	buf.Reset()
	require.NoError(t, n.WriteDeviceProfile(&buf))
	p, err = profile.Parse(&buf)
	require.NoError(t, err)
	require.Empty(t, p.Sample)

	plain := newTestNPU(t)
	requireCode(t, acl.CodeFeatureUnsupported, plain.WriteDeviceProfile(&buf))
}
