package zerocopy_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/zerocopy"
)

// reluBinding binds y = relu(x) over n elements of dt on a fresh fallback
// device, with device buffers or (host) pinned host buffers.
func reluBinding(t *testing.T, dt acl.DataType, n int, host bool) (*zerocopy.Binding, *acl.Stream) {
	t.Helper()
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, rt.Close()) })
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	g := ge.NewGraph("relu")
	g.Output(g.Relu(g.Data("x", 0, dt, []int64{int64(n)})))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	blob, err := m.MarshalBinary()
	require.NoError(t, err)
	model, err := d.LoadModel(blob)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, model.Close()) })
	var opts []zerocopy.BindOption
	if host {
		opts = append(opts, zerocopy.WithHostBuffers())
	}
	b, err := zerocopy.Bind(model, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	s, err := d.NewStream()
	require.NoError(t, err)
	return b, s
}

// TestTensorHelpers writes random values through WriteInput (float32 and,
// generically, float64), runs relu and reads the output back, for fp32,
// fp16 and bf16 IO on device and host buffers. The expected values come
// from rounding each input with floatx directly and applying relu.
func TestTensorHelpers(t *testing.T) {
	rng := newRand(t)
	round := map[acl.DataType]func(float64) float32{
		acl.Float32:  func(x float64) float32 { return float32(x) },
		acl.Float16:  func(x float64) float32 { return floatx.F16ToF32(floatx.F64ToF16(x)) },
		acl.BFloat16: func(x float64) float32 { return floatx.BF16ToF32(floatx.F64ToBF16(x)) },
	}
	for dt, rnd := range round {
		for _, host := range []bool{false, true} {
			t.Run(dt.String()+map[bool]string{false: "/device", true: "/host"}[host], func(t *testing.T) {
				const n = 257
				b, s := reluBinding(t, dt, n, host)
				x64 := make([]float64, n)
				x32 := make([]float32, n)
				want := make([]float32, n)
				for i := range x64 {
					x64[i] = rng.NormFloat64() * 100
					x32[i] = float32(x64[i])
				}
				// float32 through the method.
				for i := range want {
					want[i] = max(rnd(float64(x32[i])), 0)
				}
				require.NoError(t, b.WriteInput(0, x32))
				require.NoError(t, b.RunAsync(s))
				require.NoError(t, b.Wait(context.Background()))
				got, err := b.ReadOutput(0)
				require.NoError(t, err)
				require.Equal(t, want, got)
				// float64 in, float64 out through the generic functions:
				// rounded once from float64.
				for i := range want {
					want[i] = max(rnd(x64[i]), 0)
				}
				require.NoError(t, zerocopy.WriteInput(b, 0, x64))
				require.NoError(t, b.RunAsync(s))
				require.NoError(t, b.Wait(context.Background()))
				got64, err := zerocopy.ReadOutput[float64](b, 0)
				require.NoError(t, err)
				require.Len(t, got64, n)
				for i := range got64 {
					require.Equal(t, float64(want[i]), got64[i], "element %d", i)
				}
			})
		}
	}
}

// TestTensorHelpersMisuse: too many elements, an index out of range, a
// closed binding.
func TestTensorHelpersMisuse(t *testing.T) {
	b, _ := reluBinding(t, acl.Float32, 8, false)
	err := b.WriteInput(0, make([]float32, 9))
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), `input 0 ("x")`)
	require.NoError(t, b.WriteInput(0, make([]float32, 3)), "a prefix is fine")
	err = b.WriteInput(1, []float32{1})
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	_, err = b.ReadOutput(-1)
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	require.NoError(t, b.Close())
	_, err = b.ReadOutput(0)
	assert.Equal(t, acl.CodeRTInvalidHandle, acl.CodeOf(err))
	assert.Equal(t, acl.CodeRTInvalidHandle, acl.CodeOf(b.WriteInput(0, []float32{1})))
}
