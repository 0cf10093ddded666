package gert_test

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/gert"
)

// Single-op cases of the index family (ArgMax, TopK, GatherND, Einsum, ...).
func init() {
	moreOpCases = append(moreOpCases, indexOpCases)
}

// idxI64 makes an int64 tensor of the given shape.
func idxI64(shape []int64, vals ...int64) func() (gert.IODesc, []byte) {
	return func() (gert.IODesc, []byte) {
		b := make([]byte, 8*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
		return gert.IODesc{DataType: acl.Int64, Shape: shape, Format: acl.FormatND}, b
	}
}

func indexOpCases(rng *rand.Rand) []opCase {
	mk := func(op string, attrs gert.OpAttrs, ins ...func() (gert.IODesc, []byte)) opCase {
		c := opCase{op: op, attrs: attrs}
		for _, f := range ins {
			d, b := f()
			c.in, c.data = append(c.in, d), append(c.data, b)
		}
		return c
	}
	t := func(shape ...int64) func() (gert.IODesc, []byte) {
		return func() (gert.IODesc, []byte) { return f32(rng, shape...) }
	}
	// NonZero and Unique are built for the count of their input: fixed data.
	small := func() (gert.IODesc, []byte) {
		return idxI64([]int64{2, 4}, 3, 0, 1, 3, 0, 0, 7, 1)()
	}
	return []opCase{
		mk("ArgMax", gert.OpAttrs{"axis": int64(1), "keepdims": true}, t(3, 7, 2)),
		mk("ArgMin", gert.OpAttrs{"axis": int64(-1), "select_last_index": true}, t(3, 7, 2)),
		mk("Hardmax", gert.OpAttrs{"axis": int64(1)}, t(4, 9)),
		mk("TopK", gert.OpAttrs{"k": int64(3), "axis": int64(1), "largest": true, "sorted": true}, t(2, 8, 3)),
		mk("CumSum", gert.OpAttrs{"axis": int64(0), "exclusive": true, "reverse": true}, t(5, 3)),
		mk("NonZero", gert.OpAttrs{"count": int64(5)}, small),
		mk("Unique", gert.OpAttrs{"count": int64(4), "sorted": true}, small),
		mk("GatherElements", gert.OpAttrs{"axis": int64(1)}, t(3, 4), idxI64([]int64{3, 2}, 0, 3, -1, 2, 1, 1)),
		mk("GatherND", gert.OpAttrs{"batch_dims": int64(0)}, t(3, 4, 2), idxI64([]int64{2, 2}, 0, 3, 2, -1)),
		mk("ScatterElements", gert.OpAttrs{"axis": int64(0), "reduction": "add"}, t(3, 4), idxI64([]int64{1, 4}, 2, 0, 1, 2), t(1, 4)),
		mk("ScatterND", gert.OpAttrs{"reduction": "none"}, t(4, 3), idxI64([]int64{2, 1}, 3, 0), t(2, 3)),
		mk("OneHot", gert.OpAttrs{"depth": int64(5), "axis": int64(-1), "negative_indices": true}, idxI64([]int64{4}, 0, 4, -1, 7), t(2)),
		mk("Tile", gert.OpAttrs{"repeats": []int64{2, 1, 3}}, t(2, 3, 4)),
		mk("Trilu", gert.OpAttrs{"upper": false, "k": int64(1)}, t(2, 4, 5)),
		mk("ReverseSequence", gert.OpAttrs{"batch_axis": int64(1), "time_axis": int64(0)}, t(4, 3, 2), idxI64([]int64{3}, 4, 1, 2)),
		mk("Det", nil, t(3, 4, 4)),
		mk("Pad", gert.OpAttrs{"pads": []int64{2, -1, 1, 3}, "mode": "reflect"}, t(3, 4)),
		mk("Einsum", gert.OpAttrs{"equation": "bij,bjk->bik"}, t(2, 3, 4), t(2, 4, 5)),
	}
}
