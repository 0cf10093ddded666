package ge

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/ascend-go/cann/acl"
)

// Sampling and detection ops of the nn family: GridSample (sample x at
// normalised grid positions), AffineGrid (the grid of an affine map) and
// NonMaxSuppression (greedy box selection by IoU, its output padded to a
// static size).
const (
	OpGridSample        OpType = 401
	OpAffineGrid        OpType = 402
	OpNonMaxSuppression OpType = 404
)

// Attributes of the sampling and detection ops.
const (
	AttrGridMode       = "mode"                       // GridSample: string linear (default), nearest, cubic
	AttrPaddingMode    = "padding_mode"               // GridSample: string zeros (default), border, reflection
	AttrAlignCorners   = "align_corners"              // GridSample, AffineGrid: bool
	AttrGridSize       = "size"                       // AffineGrid: ints [N, C, spatial...]
	AttrCenterPointBox = "center_point_box"           // NonMaxSuppression: bool, boxes are [xc, yc, w, h]
	AttrMaxOutputBoxes = "max_output_boxes_per_class" // NonMaxSuppression: int
	AttrIOUThreshold   = "iou_threshold"              // NonMaxSuppression: float, suppress when IoU > it
	AttrScoreThreshold = "score_threshold"            // NonMaxSuppression: float, keep scores > it (absent: all)
)

func init() {
	registerOp(OpGridSample, &opSpec{name: "GridSample", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrGridMode: AttrString, AttrPaddingMode: AttrString, AttrAlignCorners: AttrBool},
		infer: inferGridSample, kernel: gridSampleKernel})
	registerOp(OpAffineGrid, &opSpec{name: "AffineGrid", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrGridSize: AttrInts, AttrAlignCorners: AttrBool},
		infer: inferAffineGrid, kernel: affineGridKernel})
	registerOp(OpNonMaxSuppression, &opSpec{name: "NonMaxSuppression", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrCenterPointBox: AttrBool, AttrMaxOutputBoxes: AttrInt, AttrIOUThreshold: AttrFloat, AttrScoreThreshold: AttrFloat},
		infer: inferNMS, kernel: nmsKernel})
}

// isFloatOr64 reports the float types the nn kernels compute on.
func isFloatOr64(t acl.DataType) bool { return isFloat(t) || t == acl.Float64 }

func needFloatOr64(what string, t acl.DataType) error {
	if !isFloatOr64(t) {
		return &dtypeError{fmt.Sprintf("%s has data type %s, want float32, float16, bfloat16 or float64", what, t)}
	}
	return nil
}

// readNums decodes n elements of any storable type as float64.
func readNums(dt acl.DataType, b []byte, n int) []float64 {
	v := make([]float64, n)
	if isIntType(dt) {
		iv := make([]int64, n)
		readInts(iv, dt, b)
		for i, x := range iv {
			v[i] = float64(x)
		}
	} else {
		readF64(v, dt, b)
	}
	return v
}

// GridSample samples x [N, C, spatial...] at grid [N, out spatial...,
// rank] (normalised coordinates in [-1, 1], innermost dim first, as
// ONNX's (x, y) order); set mode, padding mode and align_corners with
// WithAttr. Padding reads zeros, the edge (border) or the mirror image
// (reflection) outside the input; for linear and nearest an outside
// coordinate is first moved inside, as ONNX defines, while cubic pads
// each of its 4 taps instead, as PyTorch's bicubic and ONNX Runtime do.
// Nearest rounds half to even in 1-D and 2-D and half away from zero in
// 3-D (PyTorch's choices).
func (g *Graph) GridSample(x, grid *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpGridSample, []*Tensor{x, grid}, nil, opts)
}

func gridParams(a Attrs) (mode, pad string, err error) {
	mode, pad = a.String(AttrGridMode), a.String(AttrPaddingMode)
	if mode == "" {
		mode = "linear"
	}
	if pad == "" {
		pad = "zeros"
	}
	switch mode {
	case "linear", "nearest", "cubic":
	default:
		return "", "", fmt.Errorf("mode %q: want linear, nearest or cubic", mode)
	}
	switch pad {
	case "zeros", "border", "reflection":
	default:
		return "", "", fmt.Errorf("padding_mode %q: want zeros, border or reflection", pad)
	}
	return mode, pad, nil
}

func inferGridSample(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, g := in[0], in[1]
	if err := needFloatOr64("input", x.DataType); err != nil {
		return nil, err
	}
	if err := needFloatOr64("grid", g.DataType); err != nil {
		return nil, err
	}
	if _, _, err := gridParams(a); err != nil {
		return nil, err
	}
	sp := len(x.Dims) - 2
	if sp < 1 || sp > maxSpatial {
		return nil, fmt.Errorf("input %s must be [N, C] and 1 to %d spatial dims", dimsString(x.Dims), maxSpatial)
	}
	if len(g.Dims) != sp+2 || g.Dims[0] != x.Dims[0] || g.Dims[sp+1] != int64(sp) {
		return nil, fmt.Errorf("grid %s must be [%d, out spatial..., %d]", dimsString(g.Dims), x.Dims[0], sp)
	}
	dims := append([]int64{x.Dims[0], x.Dims[1]}, g.Dims[1:sp+1]...)
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: dims}}, nil
}

// gsReflect folds x into [lo, hi] by reflecting at the borders.
func gsReflect(x, lo, hi float64) float64 {
	rng := hi - lo
	if rng <= 0 {
		return lo
	}
	switch {
	case x < lo:
		dx := lo - x
		n := math.Floor(dx / rng)
		r := dx - n*rng
		if math.Mod(n, 2) == 0 {
			return lo + r
		}
		return hi - r
	case x > hi:
		dx := x - hi
		n := math.Floor(dx / rng)
		r := dx - n*rng
		if math.Mod(n, 2) == 0 {
			return hi - r
		}
		return lo + r
	}
	return x
}

func keysCubic(x float64, w []float64) {
	const a = -0.75
	w[0] = ((a*(x+1)-5*a)*(x+1)+8*a)*(x+1) - 4*a
	w[1] = ((a+2)*x-(a+3))*x*x + 1
	w[2] = ((a+2)*(1-x)-(a+3))*(1-x)*(1-x) + 1
	w[3] = ((a*(2-x)-5*a)*(2-x)+8*a)*(2-x) - 4*a
}

func gridSampleKernel(t *Task, args [][]byte) error {
	mode, pad, err := gridParams(t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	align := t.Attrs.Bool(AttrAlignCorners)
	xd, gd, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	sp := len(xd.Dims) - 2
	x := readNums(xd.DataType, args[0], prod(xd.Dims))
	grid := readNums(gd.DataType, args[1], prod(gd.Dims))
	n, c := int(xd.Dims[0]), int(xd.Dims[1])
	in := make([]int, sp)
	for i := range sp {
		in[i] = int(xd.Dims[2+i])
	}
	plane := prod(xd.Dims[2:])
	pts := prod(gd.Dims[1 : sp+1])
	out := make([]float64, prod(od.Dims))
	ntap := map[string]int{"nearest": 1, "linear": 2, "cubic": 4}[mode]
	// Per point and spatial dim (outermost first): the taps' indices
	// (-1: reads zero) and weights.
	idx := make([][]int, sp)
	wt := make([][]float64, sp)
	for d := range sp {
		idx[d], wt[d] = make([]int, ntap), make([]float64, ntap)
	}
	cw := make([]float64, 4)
	for b := range n {
		for p := range pts {
			g := grid[(b*pts+p)*sp : (b*pts+p+1)*sp]
			for d := range sp {
				l := float64(in[d])
				v := g[sp-1-d] // the grid's last component is the innermost dim
				var xo, lo, hi float64
				if align {
					xo, lo, hi = (v+1)/2*(l-1), 0, l-1
				} else {
					xo, lo, hi = ((v+1)*l-1)/2, -0.5, l-0.5
				}
				if mode == "nearest" {
					if sp == 3 {
						xo = math.Round(xo) // PyTorch's 3-D rounding, half away from zero
					} else {
						xo = math.RoundToEven(xo)
					}
				}
				// Border and reflection move an outside coordinate inside;
				// cubic leaves it and pads each tap instead, as PyTorch
				// (and ONNX Runtime) do.
				if (xo < lo || xo > hi) && mode != "cubic" {
					switch pad {
					case "border":
						xo = math.Max(0, math.Min(xo, l-1))
					case "reflection":
						xo = gsReflect(xo, lo, hi)
					}
				}
				if math.IsNaN(xo) {
					xo = -3 // NaN coordinates read padding
				}
				// Far outside, zeros and border taps all read padding or
				// the edge; the clamp keeps the index arithmetic small.
				// Reflected taps are periodic: only absurd coordinates are
				// clamped.
				if pad == "reflection" {
					xo = math.Max(-(1 << 40), math.Min(xo, 1<<40))
				} else {
					xo = math.Max(-4, math.Min(xo, l+4))
				}
				base := math.Floor(xo)
				f := xo - base
				switch mode {
				case "nearest":
					idx[d][0], wt[d][0] = int(xo), 1
				case "linear":
					idx[d][0], idx[d][1] = int(base), int(base)+1
					wt[d][0], wt[d][1] = 1-f, f
				default:
					keysCubic(f, cw)
					for k := range 4 {
						idx[d][k], wt[d][k] = int(base)-1+k, cw[k]
					}
				}
				for k, i := range idx[d] {
					switch {
					case i >= 0 && i < in[d]:
					case pad == "zeros":
						idx[d][k] = -1
					case pad == "border":
						idx[d][k] = max(0, min(i, in[d]-1))
					default:
						r := int(gsReflect(float64(i), lo, hi))
						idx[d][k] = max(0, min(r, in[d]-1))
					}
				}
			}
			for ch := range c {
				xp := x[(b*c+ch)*plane : (b*c+ch+1)*plane]
				out[(b*c+ch)*pts+p] = gsGather(xp, in, idx, wt, 0, 0)
			}
		}
	}
	writeFromF64(args[2], od.DataType, out)
	return nil
}

// gsGather sums the tap products over dims d.. of a plane.
func gsGather(xp []float64, in []int, idx [][]int, wt [][]float64, d, off int) float64 {
	s := 0.0
	for k, i := range idx[d] {
		w := wt[d][k]
		if i < 0 || w == 0 {
			continue
		}
		o := off*in[d] + i
		if d == len(in)-1 {
			s += w * xp[o]
		} else {
			s += w * gsGather(xp, in, idx, wt, d+1, o)
		}
	}
	return s
}

// AffineGrid returns the sampling grid [N, spatial..., rank] of the
// affine maps theta [N, rank, rank+1] over an output of size [N, C,
// spatial...] (2 or 3 spatial dims).
func (g *Graph) AffineGrid(theta *Tensor, size []int64, alignCorners bool, opts ...OpOption) *Tensor {
	return g.single(OpAffineGrid, []*Tensor{theta}, Attrs{AttrGridSize: IntsAttr(size), AttrAlignCorners: BoolAttr(alignCorners)}, opts)
}

func inferAffineGrid(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	th := in[0]
	if err := needFloatOr64("theta", th.DataType); err != nil {
		return nil, err
	}
	size := a.Ints(AttrGridSize)
	sp := len(size) - 2
	if sp != 2 && sp != 3 {
		return nil, fmt.Errorf("size %s must be [N, C, H, W] or [N, C, D, H, W]", dimsString(size))
	}
	for _, v := range size {
		if v < 1 || v > MaxDim {
			return nil, fmt.Errorf("size %s must be positive", dimsString(size))
		}
	}
	if len(th.Dims) != 3 || th.Dims[0] != size[0] || th.Dims[1] != int64(sp) || th.Dims[2] != int64(sp+1) {
		return nil, fmt.Errorf("theta %s must be [%d, %d, %d]", dimsString(th.Dims), size[0], sp, sp+1)
	}
	dims := append([]int64{size[0]}, size[2:]...)
	dims = append(dims, int64(sp))
	return []TensorDesc{{DataType: th.DataType, Format: th.Format, Dims: dims}}, nil
}

func affineGridKernel(t *Task, args [][]byte) error {
	size := t.Attrs.Ints(AttrGridSize)
	align := t.Attrs.Bool(AttrAlignCorners)
	th := readNums(t.Inputs[0].DataType, args[0], prod(t.Inputs[0].Dims))
	sp := len(size) - 2
	n := int(size[0])
	pts := prod(size[2:])
	out := make([]float64, n*pts*sp)
	// base coordinate of index i along a dim of length l.
	coord := func(i, l int) float64 {
		if align {
			if l == 1 {
				return 0
			}
			return -1 + 2*float64(i)/float64(l-1)
		}
		return -1 + (2*float64(i)+1)/float64(l)
	}
	pos := make([]int, sp)
	vec := make([]float64, sp+1)
	for b := range n {
		m := th[b*sp*(sp+1) : (b+1)*sp*(sp+1)]
		clear(pos)
		for p := range pts {
			// vec = (x, y[, z], 1): the innermost dim first.
			for d := range sp {
				vec[d] = coord(pos[sp-1-d], int(size[2+sp-1-d]))
			}
			vec[sp] = 1
			o := out[(b*pts+p)*sp : (b*pts+p+1)*sp]
			for r := range sp {
				s := 0.0
				for k := range sp + 1 {
					s += m[r*(sp+1)+k] * vec[k]
				}
				o[r] = s
			}
			for d := sp - 1; d >= 0; d-- {
				pos[d]++
				if pos[d] < int(size[2+d]) {
					break
				}
				pos[d] = 0
			}
		}
	}
	writeFromF64(args[1], t.Outputs[0].DataType, out)
	return nil
}

// NonMaxSuppression selects, per batch and class, boxes [B, N, 4] in
// descending score order (scores [B, C, N]) that overlap no selected box
// by more than the IoU threshold, at most max_output_boxes_per_class
// each. Output 0 is [B·C·K, 3] int64 rows (batch, class, box), K =
// min(max, N), the selected rows first and the rest -1; output 1 is the
// number of selected rows ([1] int64). An importer slices the selected
// rows when the inputs are constants.
func (g *Graph) NonMaxSuppression(boxes, scores *Tensor, maxPerClass int64, iou float64, opts ...OpOption) (selected, count *Tensor) {
	n := g.AddOp(OpNonMaxSuppression, []*Tensor{boxes, scores}, Attrs{AttrMaxOutputBoxes: IntAttr(maxPerClass), AttrIOUThreshold: FloatAttr(iou)}, opts...)
	return n.Output(0), n.Output(1)
}

func inferNMS(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	bx, sc := in[0], in[1]
	if err := needFloatOr64("boxes", bx.DataType); err != nil {
		return nil, err
	}
	if err := needFloatOr64("scores", sc.DataType); err != nil {
		return nil, err
	}
	if len(bx.Dims) != 3 || bx.Dims[2] != 4 {
		return nil, fmt.Errorf("boxes %s must be [B, N, 4]", dimsString(bx.Dims))
	}
	if len(sc.Dims) != 3 || sc.Dims[0] != bx.Dims[0] || sc.Dims[2] != bx.Dims[1] {
		return nil, fmt.Errorf("scores %s must be [%d, C, %d]", dimsString(sc.Dims), bx.Dims[0], bx.Dims[1])
	}
	k := a.Int(AttrMaxOutputBoxes, 0)
	if k < 1 {
		return nil, fmt.Errorf("max_output_boxes_per_class %d: the output would be empty", k)
	}
	k = min(k, bx.Dims[1])
	rows := bx.Dims[0] * sc.Dims[1] * k
	return []TensorDesc{{DataType: acl.Int64, Format: acl.FormatND, Dims: []int64{rows, 3}},
		{DataType: acl.Int64, Format: acl.FormatND, Dims: []int64{1}}}, nil
}

// nmsSuppress reports whether boxes a and b ([y1, x1, y2, x2] corners in
// any order, or [xc, yc, w, h]) overlap by an IoU above thr.
func nmsSuppress(a, b []float64, center bool, thr float64) bool {
	corners := func(v []float64) (y1, x1, y2, x2 float64) {
		if center {
			return v[1] - v[3]/2, v[0] - v[2]/2, v[1] + v[3]/2, v[0] + v[2]/2
		}
		return math.Min(v[0], v[2]), math.Min(v[1], v[3]), math.Max(v[0], v[2]), math.Max(v[1], v[3])
	}
	ay1, ax1, ay2, ax2 := corners(a)
	by1, bx1, by2, bx2 := corners(b)
	iw := math.Min(ax2, bx2) - math.Max(ax1, bx1)
	ih := math.Min(ay2, by2) - math.Max(ay1, by1)
	if iw <= 0 || ih <= 0 {
		return false
	}
	inter := iw * ih
	aa, ab := (ax2-ax1)*(ay2-ay1), (bx2-bx1)*(by2-by1)
	union := aa + ab - inter
	if aa <= 0 || ab <= 0 || union <= 0 {
		return false
	}
	return inter/union > thr
}

func nmsKernel(t *Task, args [][]byte) error {
	bd, sd := t.Inputs[0], t.Inputs[1]
	nb, nbox, nc := int(bd.Dims[0]), int(bd.Dims[1]), int(sd.Dims[1])
	boxes := readNums(bd.DataType, args[0], prod(bd.Dims))
	scores := readNums(sd.DataType, args[1], prod(sd.Dims))
	k := int(min(t.Attrs.Int(AttrMaxOutputBoxes, 0), int64(nbox)))
	center := t.Attrs.Bool(AttrCenterPointBox)
	thr := t.Attrs.Float(AttrIOUThreshold, 0)
	_, hasScore := t.Attrs[AttrScoreThreshold]
	sthr := t.Attrs.Float(AttrScoreThreshold, 0)
	out := args[2]
	rows := 0
	order := make([]int, 0, nbox)
	var sel []int
	for b := range nb {
		bx := boxes[b*nbox*4 : (b+1)*nbox*4]
		for c := range nc {
			sc := scores[(b*nc+c)*nbox : (b*nc+c+1)*nbox]
			order = order[:0]
			for i, s := range sc {
				if !hasScore || s > sthr {
					order = append(order, i)
				}
			}
			// Highest score first; ties keep the lower box index first.
			sort.SliceStable(order, func(i, j int) bool { return sc[order[i]] > sc[order[j]] })
			sel = sel[:0]
			for _, i := range order {
				if len(sel) == k {
					break
				}
				keep := true
				for _, j := range sel {
					if nmsSuppress(bx[4*i:4*i+4], bx[4*j:4*j+4], center, thr) {
						keep = false
						break
					}
				}
				if keep {
					sel = append(sel, i)
					for f, v := range [3]int{b, c, i} {
						binary.LittleEndian.PutUint64(out[(rows*3+f)*8:], uint64(v))
					}
					rows++
				}
			}
		}
	}
	for i := rows * 3 * 8; i < int(t.Outputs[0].Size()); i++ {
		out[i] = 0xff // -1 pads the unselected rows
	}
	binary.LittleEndian.PutUint64(args[3], uint64(rows))
	return nil
}

// RoiAlign: bilinear region pooling.
const OpRoiAlign OpType = 403

// Attributes of RoiAlign.
const (
	AttrRoiMode       = "mode"                           // RoiAlign: string avg (default) or max
	AttrOutputHeight  = "output_height"                  // RoiAlign: int, default 1
	AttrOutputWidth   = "output_width"                   // RoiAlign: int, default 1
	AttrSamplingRatio = "sampling_ratio"                 // RoiAlign: int, 0 = adaptive
	AttrSpatialScale  = "spatial_scale"                  // RoiAlign: float, default 1
	AttrRoiCoordMode  = "coordinate_transformation_mode" // RoiAlign: half_pixel (default) or output_half_pixel
)

func init() {
	registerOp(OpRoiAlign, &opSpec{name: "RoiAlign", minIn: 3, maxIn: 3,
		attrs: map[string]AttrKind{AttrRoiMode: AttrString, AttrOutputHeight: AttrInt, AttrOutputWidth: AttrInt,
			AttrSamplingRatio: AttrInt, AttrSpatialScale: AttrFloat, AttrRoiCoordMode: AttrString},
		infer: inferRoiAlign, kernel: roiAlignKernel})
}

// RoiAlign pools x [N, C, H, W] over the regions rois [R, 4] (x1, y1, x2,
// y2, scaled by spatial_scale) of images batchIndices [R] into [R, C,
// output_height, output_width], averaging (or taking the max of)
// bilinear samples on a sampling_ratio grid per bin.
func (g *Graph) RoiAlign(x, rois, batchIndices *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpRoiAlign, []*Tensor{x, rois, batchIndices}, nil, opts)
}

func inferRoiAlign(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, r, bi := in[0], in[1], in[2]
	if err := needFloatOr64("input", x.DataType); err != nil {
		return nil, err
	}
	if r.DataType != x.DataType {
		return nil, &dtypeError{fmt.Sprintf("rois have data type %s, input has %s", r.DataType, x.DataType)}
	}
	if bi.DataType != acl.Int64 && bi.DataType != acl.Int32 {
		return nil, &dtypeError{fmt.Sprintf("batch_indices have data type %s, want int64", bi.DataType)}
	}
	if len(x.Dims) != 4 {
		return nil, fmt.Errorf("input %s must be [N, C, H, W]", dimsString(x.Dims))
	}
	if len(r.Dims) != 2 || r.Dims[1] != 4 || len(bi.Dims) != 1 || bi.Dims[0] != r.Dims[0] {
		return nil, fmt.Errorf("rois %s and batch_indices %s must be [R, 4] and [R]", dimsString(r.Dims), dimsString(bi.Dims))
	}
	switch m := a.String(AttrRoiMode); m {
	case "", "avg", "max":
	default:
		return nil, fmt.Errorf("mode %q: want avg or max", m)
	}
	switch m := a.String(AttrRoiCoordMode); m {
	case "", "half_pixel", "output_half_pixel":
	default:
		return nil, fmt.Errorf("coordinate_transformation_mode %q", m)
	}
	oh, ow := a.Int(AttrOutputHeight, 1), a.Int(AttrOutputWidth, 1)
	if oh < 1 || ow < 1 || oh > MaxDim || ow > MaxDim || a.Int(AttrSamplingRatio, 0) < 0 {
		return nil, fmt.Errorf("output %dx%d and sampling_ratio %d must be positive", oh, ow, a.Int(AttrSamplingRatio, 0))
	}
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: []int64{r.Dims[0], x.Dims[1], oh, ow}}}, nil
}

func roiAlignKernel(t *Task, args [][]byte) error {
	xd, rd := t.Inputs[0], t.Inputs[1]
	x := readNums(xd.DataType, args[0], prod(xd.Dims))
	rois := readNums(rd.DataType, args[1], prod(rd.Dims))
	nr := int(rd.Dims[0])
	bidx := make([]int64, nr)
	readInts(bidx, t.Inputs[2].DataType, args[2])
	n, c, h, w := int(xd.Dims[0]), int(xd.Dims[1]), int(xd.Dims[2]), int(xd.Dims[3])
	ph, pw := int(t.Attrs.Int(AttrOutputHeight, 1)), int(t.Attrs.Int(AttrOutputWidth, 1))
	ratio := int(t.Attrs.Int(AttrSamplingRatio, 0))
	scale := t.Attrs.Float(AttrSpatialScale, 1)
	isMax := t.Attrs.String(AttrRoiMode) == "max"
	halfPixel := t.Attrs.String(AttrRoiCoordMode) != "output_half_pixel"
	out := make([]float64, nr*c*ph*pw)
	type tap struct {
		pos [4]int
		w   [4]float64
	}
	var taps []tap
	for r := range nr {
		b := bidx[r]
		if b < 0 || b >= int64(n) {
			return kernelError(t, "batch index %d of roi %d is out of range [0, %d)", b, r, n)
		}
		off := 0.0
		if halfPixel {
			off = 0.5
		}
		roi := rois[4*r : 4*r+4]
		sw, sh := roi[0]*scale-off, roi[1]*scale-off
		rw, rh := roi[2]*scale-off-sw, roi[3]*scale-off-sh
		if !halfPixel {
			rw, rh = math.Max(rw, 1), math.Max(rh, 1)
		}
		bh, bw := rh/float64(ph), rw/float64(pw)
		gh, gw := ratio, ratio
		if ratio == 0 {
			gh, gw = int(math.Ceil(rh/float64(ph))), int(math.Ceil(rw/float64(pw)))
		}
		if gh < 0 || gw < 0 || gh > 1<<24 || gw > 1<<24 || gh*gw > (1<<26)/(ph*pw) {
			return kernelError(t, "roi %d needs a %dx%d sampling grid", r, gh, gw)
		}
		count := float64(max(gh*gw, 1))
		// The bilinear taps of every sample, shared by all channels.
		taps = taps[:0]
		for py := range ph {
			for px := range pw {
				for iy := range gh {
					y := sh + float64(py)*bh + (float64(iy)+0.5)*bh/float64(gh)
					for ix := range gw {
						xx := sw + float64(px)*bw + (float64(ix)+0.5)*bw/float64(gw)
						var tp tap
						// Samples outside (or NaN) contribute zero.
						if y >= -1 && y <= float64(h) && xx >= -1 && xx <= float64(w) {
							y, xx := math.Max(y, 0), math.Max(xx, 0)
							yl, xl := int(y), int(xx)
							yh, xh := yl+1, xl+1
							if yl >= h-1 {
								yl, yh, y = h-1, h-1, float64(h-1)
							}
							if xl >= w-1 {
								xl, xh, xx = w-1, w-1, float64(w-1)
							}
							ly, lx := y-float64(yl), xx-float64(xl)
							hy, hx := 1-ly, 1-lx
							tp.pos = [4]int{yl*w + xl, yl*w + xh, yh*w + xl, yh*w + xh}
							tp.w = [4]float64{hy * hx, hy * lx, ly * hx, ly * lx}
						}
						taps = append(taps, tp)
					}
				}
			}
		}
		per := gh * gw
		for ch := range c {
			plane := x[(int(b)*c+ch)*h*w : (int(b)*c+ch+1)*h*w]
			for bin := range ph * pw {
				v := 0.0
				for s, tp := range taps[bin*per : (bin+1)*per] {
					if isMax {
						m := math.Max(math.Max(tp.w[0]*plane[tp.pos[0]], tp.w[1]*plane[tp.pos[1]]),
							math.Max(tp.w[2]*plane[tp.pos[2]], tp.w[3]*plane[tp.pos[3]]))
						if s == 0 || m > v {
							v = m
						}
					} else {
						v += tp.w[0]*plane[tp.pos[0]] + tp.w[1]*plane[tp.pos[1]] + tp.w[2]*plane[tp.pos[2]] + tp.w[3]*plane[tp.pos[3]]
					}
				}
				if !isMax {
					v /= count
				}
				out[((r*c)+ch)*ph*pw+bin] = v
			}
		}
	}
	writeFromF64(args[3], t.Outputs[0].DataType, out)
	return nil
}
