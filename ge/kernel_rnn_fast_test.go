package ge_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// TestRNNFastGatesMatchFloat64Path: with the default activations the
// recurrent ops take the float32 gate-vector path; a clip too large to
// act sends the same inputs through the float64 per-element path, and the
// outputs agree (RNN, GRU both reset forms, LSTM with peepholes;
// bidirectional, uneven sequence lengths).
func TestRNNFastGatesMatchFloat64Path(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 7))
	const seq, batch, in, h, dirs = 5, 3, 6, 8, 2
	for _, c := range []struct {
		op  ge.OpType
		g   int
		lbr bool
	}{{ge.OpRNN, 1, false}, {ge.OpGRU, 3, false}, {ge.OpGRU, 3, true}, {ge.OpLSTM, 4, false}} {
		gh := c.g * h
		ins := []ge.HostTensor{
			f32Tensor([]int64{seq, batch, in}, randF32(rng, seq*batch*in)),
			f32Tensor([]int64{dirs, int64(gh), in}, scaled(randF32(rng, dirs*gh*in), 0.3)),
			f32Tensor([]int64{dirs, int64(gh), h}, scaled(randF32(rng, dirs*gh*h), 0.3)),
			f32Tensor([]int64{dirs, 2 * int64(gh)}, randF32(rng, dirs*2*gh)),
			f32Tensor([]int64{dirs, batch, h}, randF32(rng, dirs*batch*h)),
		}
		if c.op == ge.OpLSTM {
			ins = append(ins, f32Tensor([]int64{dirs, batch, h}, randF32(rng, dirs*batch*h)),
				f32Tensor([]int64{dirs, 3 * h}, randF32(rng, dirs*3*h)))
		}
		ins = append(ins, i32Tensor([]int64{batch}, []int32{5, 2, 4}))
		attrs := func(clip bool) ge.Attrs {
			a := ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(h), ge.AttrDirection: ge.StringAttr("bidirectional")}
			if c.op == ge.OpGRU {
				a[ge.AttrLinearBeforeReset] = ge.BoolAttr(c.lbr)
			}
			if clip {
				a[ge.AttrClip] = ge.FloatAttr(1e30)
			}
			return a
		}
		fast, err := ge.EvalOp(c.op, attrs(false), ins)
		require.NoError(t, err, c.op.String())
		slow, err := ge.EvalOp(c.op, attrs(true), ins)
		require.NoError(t, err, c.op.String())
		require.Len(t, fast, len(slow))
		for i := range fast {
			want := f32s(slow[i])
			w64 := make([]float64, len(want))
			for j, v := range want {
				w64[j] = float64(v)
			}
			closeTo(t, f32s(fast[i]), w64, 2e-6, c.op.String())
		}
	}
}

func scaled(v []float32, s float32) []float32 {
	for i := range v {
		v[i] *= s
	}
	return v
}

func i32Tensor(dims []int64, v []int32) ge.HostTensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Int32, Format: acl.FormatND, Dims: dims}, Data: b}
}

// TestRNNPackedStepsMatchPerRow: with a batch large enough that the step
// product packs R once (batch·G·H·H above sgemm's small size), each batch
// row's outputs match running that row alone (a small product, R used as
// stored): the packed operand is wired to the right gates and rows.
func TestRNNPackedStepsMatchPerRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 9))
	const seq, batch, in, h = 4, 3, 5, 32
	for _, c := range []struct {
		op  ge.OpType
		g   int
		lbr bool
	}{{ge.OpGRU, 3, false}, {ge.OpGRU, 3, true}, {ge.OpLSTM, 4, false}} {
		gh := c.g * h
		x := randF32(rng, seq*batch*in)
		w := scaled(randF32(rng, gh*in), 0.3)
		r := scaled(randF32(rng, gh*h), 0.2)
		bias := randF32(rng, 2*gh)
		h0 := randF32(rng, batch*h)
		c0 := randF32(rng, batch*h)
		p := randF32(rng, 3*h)
		attrs := ge.Attrs{ge.AttrHiddenSize: ge.IntAttr(h)}
		if c.op == ge.OpGRU {
			attrs[ge.AttrLinearBeforeReset] = ge.BoolAttr(c.lbr)
		}
		run := func(rows []int) []ge.HostTensor {
			nb := int64(len(rows))
			var xs, hs, cs []float32
			for tm := range seq {
				for _, n := range rows {
					xs = append(xs, x[(tm*batch+n)*in:(tm*batch+n+1)*in]...)
				}
			}
			for _, n := range rows {
				hs = append(hs, h0[n*h:(n+1)*h]...)
				cs = append(cs, c0[n*h:(n+1)*h]...)
			}
			ins := []ge.HostTensor{f32Tensor([]int64{seq, nb, in}, xs), f32Tensor([]int64{1, int64(gh), in}, w),
				f32Tensor([]int64{1, int64(gh), h}, r), f32Tensor([]int64{1, 2 * int64(gh)}, bias), f32Tensor([]int64{1, nb, h}, hs)}
			if c.op == ge.OpLSTM {
				ins = append(ins, f32Tensor([]int64{1, nb, h}, cs), f32Tensor([]int64{1, 3 * h}, p))
			}
			out, err := ge.EvalOp(c.op, attrs, ins)
			require.NoError(t, err)
			return out
		}
		all := f32s(run([]int{0, 1, 2})[0]) // Y [seq, 1, batch, h]
		for n := range batch {
			one := f32s(run([]int{n})[0])
			for tm := range seq {
				want := make([]float64, h)
				for j := range want {
					want[j] = float64(one[tm*h+j])
				}
				closeTo(t, all[(tm*batch+n)*h:(tm*batch+n+1)*h], want, 1e-5, c.op.String())
			}
		}
	}
}
