package gert_test

import (
	"math/rand/v2"

	"github.com/ascend-go/cann/ge/gert"
)

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
			mk("NonMaxSuppression", gert.OpAttrs{"max_output_boxes_per_class": int64(3), "iou_threshold": float32(0.3)}, t(2, 7, 4), t(2, 3, 7)),
		}
	})
}
