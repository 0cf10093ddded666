package gert_test

import (
	"math/rand/v2"

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
		return cs
	})
}
