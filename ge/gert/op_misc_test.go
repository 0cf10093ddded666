package gert_test

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"

	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/ge/getest"
)

// Single-op cases of the misc family (reductions, losses, quantization,
// random, signal).
func init() {
	moreOpCases = append(moreOpCases, func(rng *rand.Rand) []opCase {
		t := func(shape ...int64) (gert.IODesc, []byte) { return f32(rng, shape...) }
		var cs []opCase
		for _, op := range []string{"ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare"} {
			d, b := t(3, 5, 2)
			cs = append(cs, opCase{op: op, in: []gert.IODesc{d}, data: [][]byte{b}, attrs: gert.OpAttrs{"axes": []int64{1}, "keepdims": true}})
		}
		d, b := positive(rng, 7)
		cs = append(cs, opCase{op: "ReduceLogSum", in: []gert.IODesc{d}, data: [][]byte{b}, attrs: gert.OpAttrs{"keepdims": false}})
		x, xb := t(3, 4, 2)
		cs = append(cs, opCase{op: "NLLLoss", in: []gert.IODesc{x, {DataType: acl.Int64, Shape: gert.Shape{3, 2}, Format: acl.FormatND}},
			data: [][]byte{xb, i64b(0, 3, 1, 2, 2, 0)}, attrs: gert.OpAttrs{"reduction": "mean"}})
		u8 := func(shape ...int64) (gert.IODesc, []byte) {
			n := int64(1)
			for _, d := range shape {
				n *= d
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return gert.IODesc{DataType: acl.Uint8, Shape: shape, Format: acl.FormatND}, b
		}
		scale := func(v float32) (gert.IODesc, []byte) {
			return gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{}, Format: acl.FormatND}, getest.F32Bytes([]float32{v})
		}
		mk := func(op string, attrs gert.OpAttrs, ins ...func() (gert.IODesc, []byte)) opCase {
			c := opCase{op: op, attrs: attrs}
			for _, f := range ins {
				d, b := f()
				c.in, c.data = append(c.in, d), append(c.data, b)
			}
			return c
		}
		fl := func(shape ...int64) func() (gert.IODesc, []byte) {
			return func() (gert.IODesc, []byte) { return f32(rng, shape...) }
		}
		q := func(shape ...int64) func() (gert.IODesc, []byte) {
			return func() (gert.IODesc, []byte) { return u8(shape...) }
		}
		sc := func(v float32) func() (gert.IODesc, []byte) { return func() (gert.IODesc, []byte) { return scale(v) } }
		cs = append(cs,
			mk("QuantizeLinear", gert.OpAttrs{"axis": int64(1)}, fl(2, 3), sc(0.02), q()),
			mk("DequantizeLinear", gert.OpAttrs{"axis": int64(1)}, q(2, 3), sc(0.02), q()),
			mk("DynamicQuantizeLinear", nil, fl(3, 5)),
			mk("MatMulInteger", nil, q(3, 5), q(5, 2), q(), q(2)),
			mk("QLinearMatMul", nil, q(3, 5), sc(0.01), q(), q(5, 2), sc(0.02), q(), sc(0.5), q()),
			mk("ConvInteger", gert.OpAttrs{"pads": []int64{1, 1, 1, 1}}, q(1, 2, 4, 4), q(3, 2, 2, 2), q(), q()),
			mk("QLinearConv", gert.OpAttrs{"strides": []int64{2, 1}}, q(1, 2, 5, 4), sc(0.01), q(), q(3, 2, 2, 2), sc(0.02), q(), sc(0.3), q()),
			// reference() passes no string attributes: the default direction.
			mk("RNN", gert.OpAttrs{"hidden_size": int64(4), "clip": float32(0.5)}, fl(3, 2, 5), fl(1, 4, 5), fl(1, 4, 4), fl(1, 8), fl(1, 2, 4)),
			mk("DFT", gert.OpAttrs{"axis": int64(1), "inverse": true}, fl(2, 6, 3, 2)),
			mk("STFT", gert.OpAttrs{"frame_step": int64(4), "frame_length": int64(8), "onesided": true}, fl(2, 30, 1), fl(8)),
			mk("MelWeightMatrix", gert.OpAttrs{"num_mel_bins": int64(5), "length": int64(32), "sample_rate": int64(16000)}, sc(20), sc(7000)),
			mk("RandomUniform", gert.OpAttrs{"shape": []int64{3, 7}, "seed": int64(5), "low": float32(-2)}),
			mk("RandomNormal", gert.OpAttrs{"shape": []int64{11}, "scale": float32(3)}),
			mk("Bernoulli", gert.OpAttrs{"seed": int64(1)}, func() (gert.IODesc, []byte) {
				p := make([]float32, 20) // probabilities in [0, 1)
				for i := range p {
					p[i] = rng.Float32()
				}
				return gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{4, 5}, Format: acl.FormatND}, getest.F32Bytes(p)
			}),
			mk("Multinomial", gert.OpAttrs{"sample_size": int64(6)}, fl(3, 4)),
		)
		return cs
	})
}

func i64b(v ...int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}
