package gert_test

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"

	"github.com/ascend-go/cann/ge/gert"
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
