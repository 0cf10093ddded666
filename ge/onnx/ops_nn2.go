package onnx

import (
	"encoding/binary"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

func init() {
	converters["Resize"] = convResize
	converters["Upsample"] = convUpsample
	converters["GridSample"] = convGridSample
	converters["AffineGrid"] = convAffineGrid
	converters["NonMaxSuppression"] = convNMS
	converters["MaxUnpool"] = convMaxUnpool
	converters["LpPool"] = convLpPool
	converters["GlobalLpPool"] = convGlobalLpPool
	converters["InstanceNormalization"] = convInstanceNorm
	converters["GroupNormalization"] = convGroupNorm
	converters["LpNormalization"] = convLpNorm
	converters["LRN"] = convLRN
	converters["MeanVarianceNormalization"] = convMVN
	converters["RoiAlign"] = convRoiAlign
}

// constFloats returns the values of a constant numeric input as float64,
// or ErrDynamicShape when the input is computed at run time.
func (c *nodeCtx) constFloats(v *value, what string) ([]float64, error) {
	if v.c == nil {
		return nil, c.errf(ErrDynamicShape, "%s must be a constant (or fold to one)", what)
	}
	h, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Float64))}, []ge.HostTensor{*v.c})
	if err != nil {
		return nil, c.errf(ErrUnsupportedDataType, "%s: %v", what, err)
	}
	out := make([]float64, h[0].Desc.NumElements())
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(h[0].Data[8*i:]))
	}
	return out, nil
}

// inPresent returns input i, or nil when it is absent or an empty tensor
// (how exporters leave out Resize's roi and scales before opset 13).
func (c *nodeCtx) inPresent(i int) *value {
	if v := c.in(i); v != nil && v.desc.NumElements() > 0 {
		return v
	}
	return nil
}

// resizeOutDims is the output extent of a dim of n scaled by s when no
// sizes are given: floor(n·s), as ONNX's reference computes it.
func resizeOutDims(c *nodeCtx, x []int64, scales []float64) ([]int64, error) {
	out := make([]int64, len(x))
	for i := range x {
		if !(scales[i] > 0) || math.IsInf(scales[i], 0) {
			return nil, c.errf(ErrInvalidModel, "scale %v of dim %d must be positive", scales[i], i)
		}
		v := math.Floor(float64(x[i]) * scales[i])
		if v > ge.MaxDim {
			return nil, c.errf(ErrInvalidModel, "dim %d scaled by %v is too large", i, scales[i])
		}
		if v < 1 {
			return nil, c.errf(ErrEmptyTensor, "dim %d of %d scaled by %v is empty", i, x[i], scales[i])
		}
		out[i] = int64(v)
	}
	return out, nil
}

// convResize resolves the scales, sizes, roi, axes and
// keep_aspect_ratio_policy of Resize (opsets 10 to 19) into ge Resize's
// full-rank output dims and coordinate scales. Opset 10 maps coordinates
// asymmetrically and picks nearest pixels by floor (ceil when
// downsampling), as runtimes implement it.
func convResize(c *nodeCtx) ([]*value, error) {
	x := c.ins[0].desc.Dims
	r := len(x)
	mode := c.strAttr("mode", "nearest")
	a := ge.Attrs{ge.AttrResizeMode: ge.StringAttr(mode)}
	var scalesV, sizesV, roiV *value
	if c.im.opset < 11 {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		scalesV = c.ins[1]
		a[ge.AttrCoordTransform] = ge.StringAttr("asymmetric")
		a[ge.AttrNearestMode] = ge.StringAttr("simple")
	} else {
		if err := c.need(1, 4); err != nil {
			return nil, err
		}
		roiV, scalesV, sizesV = c.inPresent(1), c.inPresent(2), c.inPresent(3)
		coord := c.strAttr("coordinate_transformation_mode", "half_pixel")
		a[ge.AttrCoordTransform] = ge.StringAttr(coord)
		a[ge.AttrNearestMode] = ge.StringAttr(c.strAttr("nearest_mode", "round_prefer_floor"))
		a[ge.AttrCubicCoeffA] = ge.FloatAttr(c.floatAttr("cubic_coeff_a", -0.75))
		a[ge.AttrExcludeOutside] = ge.BoolAttr(c.intAttr("exclude_outside", 0) != 0)
		a[ge.AttrExtrapolationVal] = ge.FloatAttr(c.floatAttr("extrapolation_value", 0))
		a[ge.AttrAntialias] = ge.BoolAttr(c.intAttr("antialias", 0) != 0)
		if coord != "tf_crop_and_resize" {
			roiV = nil // only tf_crop_and_resize reads the roi
		}
	}
	// axes (opset 18) name the dims scales, sizes and roi refer to.
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if v, ok := c.intsAttr("axes"); ok {
		axes = axes[:0]
		seen := map[int]bool{}
		for _, ax := range v {
			j, err := c.normAxis(ax, r)
			if err != nil {
				return nil, err
			}
			if seen[j] {
				return nil, c.errf(ErrInvalidModel, "axis %d repeated", ax)
			}
			seen[j] = true
			axes = append(axes, j)
		}
	}
	policy := c.strAttr("keep_aspect_ratio_policy", "stretch")
	scales := make([]float64, r)
	for i := range scales {
		scales[i] = 1
	}
	var out []int64
	switch {
	case sizesV != nil:
		sizes, err := c.constInts(sizesV, "sizes")
		if err != nil {
			return nil, err
		}
		if len(sizes) != len(axes) {
			return nil, c.errf(ErrInvalidModel, "sizes %v for %d axes", sizes, len(axes))
		}
		out = append([]int64(nil), x...)
		for i, ax := range axes {
			if sizes[i] < 1 {
				return nil, c.errf(ErrEmptyTensor, "sizes %v", sizes)
			}
			out[ax] = sizes[i]
			scales[ax] = float64(sizes[i]) / float64(x[ax])
		}
		if policy != "stretch" {
			s := scales[axes[0]]
			for _, ax := range axes {
				switch policy {
				case "not_larger":
					s = math.Min(s, scales[ax])
				case "not_smaller":
					s = math.Max(s, scales[ax])
				default:
					return nil, c.errf(ErrUnsupportedAttr, "keep_aspect_ratio_policy %q", policy)
				}
			}
			for _, ax := range axes {
				scales[ax] = s
				out[ax] = int64(s*float64(x[ax]) + 0.5) // round half up, as the spec
				if out[ax] < 1 {
					return nil, c.errf(ErrEmptyTensor, "dim %d resized to 0", ax)
				}
			}
		}
	case scalesV != nil:
		s, err := c.constFloats(scalesV, "scales")
		if err != nil {
			return nil, err
		}
		if len(s) != len(axes) {
			return nil, c.errf(ErrInvalidModel, "scales %v for %d axes", s, len(axes))
		}
		for i, ax := range axes {
			scales[ax] = s[i]
		}
		if out, err = resizeOutDims(c, x, scales); err != nil {
			return nil, err
		}
	default:
		return nil, c.errf(ErrInvalidModel, "Resize needs scales or sizes")
	}
	if roiV != nil {
		roi, err := c.constFloats(roiV, "roi")
		if err != nil {
			return nil, err
		}
		if len(roi) != 2*len(axes) {
			return nil, c.errf(ErrInvalidModel, "roi %v for %d axes", roi, len(axes))
		}
		full := make([]float64, 2*r)
		for i := range r {
			full[r+i] = 1
		}
		for i, ax := range axes {
			full[ax], full[r+ax] = roi[i], roi[len(axes)+i]
		}
		a[ge.AttrResizeROI] = ge.StringAttr(ge.FormatFloats(full))
	} else if a.String(ge.AttrCoordTransform) == "tf_crop_and_resize" {
		return nil, c.errf(ErrInvalidModel, "tf_crop_and_resize needs roi")
	}
	a[ge.AttrResizeSizes] = ge.IntsAttr(out)
	a[ge.AttrResizeScales] = ge.StringAttr(ge.FormatFloats(scales))
	return one(c.emit(ge.OpResize, a, c.ins[0]))
}

// convUpsample is Resize with asymmetric coordinates and Upsample's
// nearest rule: scales an attribute in opset 7, an input from opset 9.
func convUpsample(c *nodeCtx) ([]*value, error) {
	mode := c.strAttr("mode", "nearest")
	if mode == "bilinear" {
		mode = "linear"
	}
	var scales []float64
	var err error
	if c.im.opset < 9 {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		a := c.attr("scales")
		if a == nil {
			return nil, c.errf(ErrInvalidModel, "Upsample needs scales")
		}
		for _, f := range a.GetFloats() {
			scales = append(scales, float64(f))
		}
	} else {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		if scales, err = c.constFloats(c.ins[1], "scales"); err != nil {
			return nil, err
		}
	}
	x := c.ins[0].desc.Dims
	if len(scales) != len(x) {
		return nil, c.errf(ErrInvalidModel, "scales %v for rank %d", scales, len(x))
	}
	out, err := resizeOutDims(c, x, scales)
	if err != nil {
		return nil, err
	}
	return one(c.emit(ge.OpResize, ge.Attrs{ge.AttrResizeMode: ge.StringAttr(mode), ge.AttrCoordTransform: ge.StringAttr("asymmetric"),
		ge.AttrNearestMode: ge.StringAttr("simple"), ge.AttrResizeSizes: ge.IntsAttr(out), ge.AttrResizeScales: ge.StringAttr(ge.FormatFloats(scales))}, c.ins[0]))
}

// convGridSample maps GridSample's opset-16 mode names (bilinear,
// bicubic) to opset 20's (linear, cubic).
func convGridSample(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 2); err != nil {
		return nil, err
	}
	mode := c.strAttr("mode", map[bool]string{true: "bilinear", false: "linear"}[c.im.opset < 20])
	switch mode {
	case "bilinear":
		mode = "linear"
	case "bicubic":
		mode = "cubic"
	}
	return one(c.emit(ge.OpGridSample, ge.Attrs{ge.AttrGridMode: ge.StringAttr(mode),
		ge.AttrPaddingMode:  ge.StringAttr(c.strAttr("padding_mode", "zeros")),
		ge.AttrAlignCorners: ge.BoolAttr(c.intAttr("align_corners", 0) != 0)}, c.ins[0], c.ins[1]))
}

// convAffineGrid reads the output size, which must be known.
func convAffineGrid(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 2); err != nil {
		return nil, err
	}
	size, err := c.constInts(c.ins[1], "size")
	if err != nil {
		return nil, err
	}
	return one(c.emit(ge.OpAffineGrid, ge.Attrs{ge.AttrGridSize: ge.IntsAttr(size),
		ge.AttrAlignCorners: ge.BoolAttr(c.intAttr("align_corners", 0) != 0)}, c.ins[0]))
}

// convNMS runs NonMaxSuppression when its inputs are constants (the
// number of selected boxes is data dependent) and keeps the selected rows.
func convNMS(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 5); err != nil {
		return nil, err
	}
	a := ge.Attrs{ge.AttrCenterPointBox: ge.BoolAttr(c.intAttr("center_point_box", 0) != 0)}
	maxOut := int64(0)
	if v := c.inPresent(2); v != nil {
		m, err := c.constInts(v, "max_output_boxes_per_class")
		if err != nil {
			return nil, err
		}
		if len(m) != 1 {
			return nil, c.errf(ErrInvalidModel, "max_output_boxes_per_class %v must hold one value", m)
		}
		maxOut = m[0]
	}
	if maxOut <= 0 {
		return nil, c.errf(ErrEmptyTensor, "max_output_boxes_per_class %d selects no box", maxOut)
	}
	a[ge.AttrMaxOutputBoxes] = ge.IntAttr(maxOut)
	if v := c.inPresent(3); v != nil {
		f, err := c.constFloat(v, "iou_threshold")
		if err != nil {
			return nil, err
		}
		a[ge.AttrIOUThreshold] = ge.FloatAttr(f)
	}
	if v := c.inPresent(4); v != nil {
		f, err := c.constFloat(v, "score_threshold")
		if err != nil {
			return nil, err
		}
		a[ge.AttrScoreThreshold] = ge.FloatAttr(f)
	}
	if c.ins[0].c == nil || c.ins[1].c == nil {
		return nil, c.errf(ErrDynamicShape, "the number of selected boxes depends on the boxes and scores, which are computed at run time")
	}
	outs, err := c.emitN(ge.OpNonMaxSuppression, a, c.ins[0], c.ins[1])
	if err != nil {
		return nil, err
	}
	if outs[0].c == nil || outs[1].c == nil {
		return nil, c.errf(ErrDynamicShape, "NonMaxSuppression of %v boxes is too large to run at import", c.ins[0].desc.Dims)
	}
	rows := int64(binary.LittleEndian.Uint64(outs[1].c.Data))
	if rows == 0 {
		return nil, c.errf(ErrEmptyTensor, "no box is selected")
	}
	return []*value{konst(acl.Int64, []int64{rows, 3}, outs[0].c.Data[:rows*24])}, nil
}

// convMaxUnpool scatters into the default output (each spatial dim
// (in-1)·stride + kernel - pads) or into output_shape, where the indices
// keep their positions in the default dims.
func convMaxUnpool(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 3); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	k, ok := c.intsAttr("kernel_shape")
	if !ok || len(k) != len(x)-2 {
		return nil, c.errf(ErrInvalidModel, "kernel_shape %v does not fit input %v", k, x)
	}
	a, err := c.spatialAttrs(x, k, false)
	if err != nil {
		return nil, err
	}
	sp := len(x) - 2
	strides, pads := a.Ints(ge.AttrStrides), a.Ints(ge.AttrPads)
	def := []int64{x[0], x[1]}
	for i := range sp {
		d := (x[2+i]-1)*strides[i] + k[i] - pads[i] - pads[sp+i]
		if d < 1 {
			return nil, c.errf(ErrInvalidModel, "unpooled dim %d is %d", i, d)
		}
		def = append(def, d)
	}
	out := def
	if v := c.in(2); v != nil {
		if out, err = c.constInts(v, "output_shape"); err != nil {
			return nil, err
		}
		if len(out) != len(x) {
			return nil, c.errf(ErrInvalidModel, "output_shape %v for input %v", out, x)
		}
	}
	return one(c.emit(ge.OpMaxUnpool, ge.Attrs{ge.AttrOutputShape: ge.IntsAttr(out), ge.AttrIndexShape: ge.IntsAttr(def)}, c.ins[0], c.ins[1]))
}

// lpP reads LpPool's p: a float before opset 2, an int since.
func (c *nodeCtx) lpP() (int64, error) {
	a := c.attr("p")
	if a == nil {
		return 2, nil
	}
	p := a.GetI()
	if a.GetType() == pb.AttributeProto_FLOAT {
		f := float64(a.GetF())
		if f != math.Trunc(f) {
			return 0, c.errf(ErrUnsupportedAttr, "p %v: only integral norms are supported", f)
		}
		p = int64(f)
	}
	if p < 1 {
		return 0, c.errf(ErrInvalidModel, "p %d must be positive", p)
	}
	return p, nil
}

func convLpPool(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	k, ok := c.intsAttr("kernel_shape")
	if !ok || len(k) != len(x)-2 {
		return nil, c.errf(ErrInvalidModel, "kernel_shape %v does not fit input %v", k, x)
	}
	a, err := c.spatialAttrs(x, k, true)
	if err != nil {
		return nil, err
	}
	p, err := c.lpP()
	if err != nil {
		return nil, err
	}
	a[ge.AttrKernelShape] = ge.IntsAttr(k)
	a[ge.AttrCeilMode] = ge.BoolAttr(c.intAttr("ceil_mode", 0) != 0)
	a[ge.AttrP] = ge.IntAttr(p)
	return one(c.emit(ge.OpLpPool, a, c.ins[0]))
}

func convGlobalLpPool(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	if len(x) < 3 || len(x) > 5 {
		return nil, c.errf(ErrUnsupportedAttr, "input %v: 1 to 3 spatial dims are supported", x)
	}
	p, err := c.lpP()
	if err != nil {
		return nil, err
	}
	return one(c.emit(ge.OpLpPool, ge.Attrs{ge.AttrKernelShape: ge.IntsAttr(x[2:]), ge.AttrP: ge.IntAttr(p)}, c.ins[0]))
}

// convInstanceNorm is GroupNorm with one channel per group.
func convInstanceNorm(c *nodeCtx) ([]*value, error) {
	if err := c.need(3, 3); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	if len(x) < 2 {
		return nil, c.errf(ErrInvalidModel, "input %v must be [N, C, ...]", x)
	}
	return one(c.emit(ge.OpGroupNorm, ge.Attrs{ge.AttrNumGroups: ge.IntAttr(x[1]), ge.AttrEpsilon: ge.FloatAttr(c.floatAttr("epsilon", 1e-5))}, c.ins...))
}

// convGroupNorm: scale and bias are per group in opset 18, per channel
// from 21; GroupNorm takes either. stash_type only names the precision
// of the statistics, which are float64 here.
func convGroupNorm(c *nodeCtx) ([]*value, error) {
	if err := c.need(3, 3); err != nil {
		return nil, err
	}
	c.ignore("stash_type")
	g := c.intAttr("num_groups", 0)
	return one(c.emit(ge.OpGroupNorm, ge.Attrs{ge.AttrNumGroups: ge.IntAttr(g), ge.AttrEpsilon: ge.FloatAttr(c.floatAttr("epsilon", 1e-5))}, c.ins...))
}

func convLpNorm(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	return one(c.emit(ge.OpLpNorm, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", -1)), ge.AttrP: ge.IntAttr(c.intAttr("p", 2))}, c.ins[0]))
}

func convLRN(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	size := c.intAttr("size", 0)
	return one(c.emit(ge.OpLRN, ge.Attrs{ge.AttrSize: ge.IntAttr(size), ge.AttrAlpha: ge.FloatAttr(c.floatAttr("alpha", 1e-4)),
		ge.AttrLRNBeta: ge.FloatAttr(c.floatAttr("beta", 0.75)), ge.AttrLRNBias: ge.FloatAttr(c.floatAttr("bias", 1))}, c.ins[0]))
}

func convMVN(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	axes, ok := c.intsAttr("axes")
	if !ok {
		axes = []int64{0, 2, 3}
	}
	return one(c.emit(ge.OpMVN, ge.Attrs{ge.AttrAxes: ge.IntsAttr(axes)}, c.ins[0]))
}

// convRoiAlign: opset 10 has no coordinate_transformation_mode and maps
// as output_half_pixel; opset 16 defaults to half_pixel.
func convRoiAlign(c *nodeCtx) ([]*value, error) {
	if err := c.need(3, 3); err != nil {
		return nil, err
	}
	coord := "output_half_pixel"
	if c.im.opset >= 16 {
		coord = c.strAttr("coordinate_transformation_mode", "half_pixel")
	}
	return one(c.emit(ge.OpRoiAlign, ge.Attrs{ge.AttrRoiMode: ge.StringAttr(c.strAttr("mode", "avg")),
		ge.AttrOutputHeight: ge.IntAttr(c.intAttr("output_height", 1)), ge.AttrOutputWidth: ge.IntAttr(c.intAttr("output_width", 1)),
		ge.AttrSamplingRatio: ge.IntAttr(c.intAttr("sampling_ratio", 0)), ge.AttrSpatialScale: ge.FloatAttr(c.floatAttr("spatial_scale", 1)),
		ge.AttrRoiCoordMode: ge.StringAttr(coord)}, c.ins...))
}
