package gert_test

import (
	"math/rand/v2"

	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/gert"
)

// Single-op cases of the fused ops the compiler's fusion pass makes
// (ge/fuse_ops.go).
func init() {
	moreOpCases = append(moreOpCases, fuseOpCases)
}

func fuseOpCases(rng *rand.Rand) []opCase {
	mk := func(op string, attrs gert.OpAttrs, shapes ...[]int64) opCase {
		c := opCase{op: op, attrs: attrs}
		for _, s := range shapes {
			d, b := f32(rng, s...)
			c.in, c.data = append(c.in, d), append(c.data, b)
		}
		return c
	}
	chain := gert.OpAttrs{
		"chain_ops":  []int64{int64(ge.OpAdd), int64(ge.OpRelu), int64(ge.OpMul), int64(ge.OpSub)},
		"chain_args": []int64{1, -1, 0, 2},
		"chain_swap": []int64{0, 0, 1, 1},
	}
	return []opCase{
		mk("FusedMatMul", gert.OpAttrs{"activation": int64(ge.OpRelu), "scale": float32(0.5)}, []int64{7, 13}, []int64{13, 5}, []int64{5}),
		mk("FusedMatMul", gert.OpAttrs{"transpose_b": true, "activation": int64(ge.OpLeakyRelu), "alpha": float32(0.1)}, []int64{2, 3, 9}, []int64{4, 9}),
		mk("FusedConv", gert.OpAttrs{"pads": []int64{1, 1, 1, 1}, "activation": int64(ge.OpSilu)}, []int64{2, 3, 6, 5}, []int64{4, 3, 3, 3}, []int64{4}),
		mk("ElemChain", chain, []int64{3, 4, 11}, []int64{11}, []int64{1}),
	}
}
