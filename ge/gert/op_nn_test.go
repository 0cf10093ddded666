package gert_test

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/ge/getest"
)

// i64s is an int64 tensor of the given shape.
func i64s(shape []int64, vals ...int64) (gert.IODesc, []byte) {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return gert.IODesc{DataType: acl.Int64, Shape: shape, Format: acl.FormatND}, b
}

// Single-op cases of the nn family (Resize, GridSample, RoiAlign, NMS,
// pooling, padding and normalisation ops).
func init() {
	moreOpCases = append(moreOpCases, func(rng *rand.Rand) []opCase {
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
		return []opCase{
			mk("Resize", gert.OpAttrs{"mode": "cubic", "sizes": []int64{1, 2, 7, 3}, "scales": "1 1 1.75 0.6"}, t(1, 2, 4, 5)),
			mk("GridSample", gert.OpAttrs{"mode": "cubic", "padding_mode": "reflection"}, t(2, 3, 5, 4), t(2, 3, 6, 2)),
			mk("AffineGrid", gert.OpAttrs{"size": []int64{2, 3, 4, 5}, "align_corners": true}, t(2, 2, 3)),
			mk("MaxPoolWithIndices", gert.OpAttrs{"kernel_shape": []int64{2, 3}, "strides": []int64{2, 1}, "pads": []int64{1, 0, 0, 1}, "storage_order": int64(1)}, t(2, 3, 6, 7)),
			mk("LpPool", gert.OpAttrs{"kernel_shape": []int64{3, 2}, "p": int64(3), "ceil_mode": true, "strides": []int64{2, 2}}, t(1, 2, 6, 5)),
			mk("MaxUnpool", gert.OpAttrs{"output_shape": []int64{1, 2, 5, 4}, "index_shape": []int64{1, 2, 4, 4}}, t(1, 2, 2, 2), func() (gert.IODesc, []byte) {
				return i64s([]int64{1, 2, 2, 2}, 0, 3, 9, 14, 16, 21, 26, 31)
			}),
			mk("GroupNorm", gert.OpAttrs{"num_groups": int64(2), "epsilon": float32(1e-5)}, t(2, 4, 3, 5), t(4), t(2)),
			mk("LpNorm", gert.OpAttrs{"axis": int64(1), "p": int64(1)}, t(3, 7, 2)),
			mk("LRN", gert.OpAttrs{"size": int64(3), "alpha": float32(1e-3), "beta": float32(0.75), "bias": float32(2)}, t(2, 5, 3, 3)),
			mk("MVN", gert.OpAttrs{"axes": []int64{0, 2}}, t(2, 3, 4)),
			mk("BatchNormTrain", gert.OpAttrs{"epsilon": float32(1e-5), "momentum": float32(0.8)}, t(2, 3, 4, 5), t(3), t(3), t(3), func() (gert.IODesc, []byte) { return positive(rng, 3) }),
			mk("RoiAlign", gert.OpAttrs{"output_height": int64(3), "output_width": int64(2), "sampling_ratio": int64(2), "spatial_scale": float32(0.5)}, t(2, 3, 8, 9),
				func() (gert.IODesc, []byte) {
					return gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{2, 4}, Format: acl.FormatND}, getest.F32Bytes([]float32{1, 2, 9, 12, 0, 0, 17, 15})
				}, func() (gert.IODesc, []byte) { return i64s([]int64{2}, 1, 0) }),
			mk("NonMaxSuppression", gert.OpAttrs{"max_output_boxes_per_class": int64(3), "iou_threshold": float32(0.3)}, t(2, 7, 4), t(2, 3, 7)),
		}
	})
}
