package ge

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ascend-go/cann/acl"
)

// Resize samples x at new sizes, one separable 1-D resampling per axis, as
// ONNX Resize (and Upsample) define it: every output coordinate maps back
// to an input coordinate (the coordinate transformation mode), and the
// nearest pixel (nearest), the 2 neighbours (linear) or the 4 neighbours
// (cubic) are weighted; antialias widens the linear or cubic filter by
// 1/scale when downsampling. Indices past the edges read the edge pixel
// (ONNX's edge padding); exclude_outside instead drops those taps and
// renormalises. The output dims and the per-axis scales are attributes
// (an importer resolves sizes, scales, axes and keep_aspect_ratio_policy):
// the scales are not always output/input (a scale 0.6 on 4 pixels gives 2
// pixels but maps coordinates with 0.6), so they travel as exact decimal
// float64 text. nearest copies elements and takes every storable type;
// linear and cubic compute in float64 on float types.
const OpResize OpType = 400

// Attributes of Resize.
const (
	AttrResizeSizes       = "sizes"                          // ints: the output dims (full rank)
	AttrResizeScales      = "scales"                         // string: one float64 per dim, space separated
	AttrResizeROI         = "roi"                            // string: tf_crop_and_resize's starts then ends, 2·rank float64
	AttrResizeMode        = "mode"                           // string: nearest (default), linear, cubic
	AttrCoordTransform    = "coordinate_transformation_mode" // string, default half_pixel
	AttrNearestMode       = "nearest_mode"                   // string, default round_prefer_floor; "simple" is Upsample's
	AttrCubicCoeffA       = "cubic_coeff_a"                  // float, default -0.75
	AttrExcludeOutside    = "exclude_outside"                // bool
	AttrExtrapolationVal  = "extrapolation_value"            // float, tf_crop_and_resize's outside value
	AttrAntialias         = "antialias"                      // bool: linear and cubic only
	resizeMaxTapsPerPixel = 1 << 16
)

func init() {
	registerOp(OpResize, &opSpec{name: "Resize", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrResizeSizes: AttrInts, AttrResizeScales: AttrString, AttrResizeROI: AttrString,
			AttrResizeMode: AttrString, AttrCoordTransform: AttrString, AttrNearestMode: AttrString,
			AttrCubicCoeffA: AttrFloat, AttrExcludeOutside: AttrBool, AttrExtrapolationVal: AttrFloat, AttrAntialias: AttrBool},
		infer: inferResize, kernel: resizeKernel})
}

// Resize resamples x to the dims sizes with per-dim scales (the factor the
// coordinates map with, usually sizes[i]/dims[i]); set the mode, the
// coordinate transformation and the rest with WithAttr.
func (g *Graph) Resize(x *Tensor, sizes []int64, scales []float64, opts ...OpOption) *Tensor {
	return g.single(OpResize, []*Tensor{x}, Attrs{AttrResizeSizes: IntsAttr(sizes), AttrResizeScales: StringAttr(FormatFloats(scales))}, opts)
}

// FormatFloats writes float64 values as space-separated text that parses
// back exactly (the form of Resize's scales and roi attributes).
func FormatFloats(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(s, " ")
}

// parseFloatsInto appends the space-separated finite numbers of s to dst
// (a kernel passes stack or arena room, so nothing is allocated).
func parseFloatsInto(dst []float64, key, s string) ([]float64, error) {
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
		if i == len(s) {
			return dst, nil
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' {
			j++
		}
		x, err := strconv.ParseFloat(s[i:j], 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%s %q: value %d is not a finite number", key, s, len(dst))
		}
		dst = append(dst, x)
		i = j
	}
}

// resizeParams are Resize's checked attributes.
type resizeParams struct {
	sizes             []int64
	scales, roi       []float64
	mode, coord, near string
	a, extrap         float64
	exclude, aa       bool
}

func resizeParamsOf(in []TensorDesc, a Attrs) (*resizeParams, error) {
	p := new(resizeParams)
	if err := resizeParamsInto(p, in, a, nil, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// resizeParamsInto fills p, the scales and roi appended to the given
// buffers (stack room in the kernel).
func resizeParamsInto(p *resizeParams, in []TensorDesc, a Attrs, scales, roi []float64) error {
	x := in[0]
	r := len(x.Dims)
	*p = resizeParams{sizes: a.Ints(AttrResizeSizes), mode: a.String(AttrResizeMode), coord: a.String(AttrCoordTransform),
		near: a.String(AttrNearestMode), a: a.Float(AttrCubicCoeffA, -0.75), extrap: a.Float(AttrExtrapolationVal, 0),
		exclude: a.Bool(AttrExcludeOutside), aa: a.Bool(AttrAntialias)}
	if p.mode == "" {
		p.mode = "nearest"
	}
	if p.coord == "" {
		p.coord = "half_pixel"
	}
	if p.near == "" {
		p.near = "round_prefer_floor"
	}
	switch p.mode {
	case "nearest":
		if !storable(x.DataType) {
			return &dtypeError{fmt.Sprintf("cannot resize %s", x.DataType)}
		}
		if p.aa {
			return fmt.Errorf("antialias applies to linear and cubic modes only")
		}
	case "linear", "cubic":
		if !isFloat(x.DataType) && x.DataType != acl.Float64 {
			return &dtypeError{fmt.Sprintf("%s resize of %s: want a float type", p.mode, x.DataType)}
		}
	default:
		return fmt.Errorf("mode %q: want nearest, linear or cubic", p.mode)
	}
	switch p.near {
	case "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple":
	default:
		return fmt.Errorf("nearest_mode %q", p.near)
	}
	switch p.coord {
	case "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize":
	default:
		return fmt.Errorf("coordinate_transformation_mode %q", p.coord)
	}
	if r < 1 {
		return fmt.Errorf("cannot resize a scalar")
	}
	if len(p.sizes) != r {
		return fmt.Errorf("sizes %s: want %d values", dimsString(p.sizes), r)
	}
	var err error
	if p.scales, err = parseFloatsInto(scales, AttrResizeScales, a.String(AttrResizeScales)); err != nil {
		return err
	}
	if len(p.scales) != r {
		return fmt.Errorf("scales %q: want %d values", a.String(AttrResizeScales), r)
	}
	for i := range r {
		if p.sizes[i] < 1 || p.sizes[i] > MaxDim {
			return fmt.Errorf("sizes %s: dim %d must be positive", dimsString(p.sizes), i)
		}
		if !(p.scales[i] > 0) {
			return fmt.Errorf("scale %v of dim %d must be positive", p.scales[i], i)
		}
	}
	if p.coord == "tf_crop_and_resize" {
		if p.roi, err = parseFloatsInto(roi, AttrResizeROI, a.String(AttrResizeROI)); err != nil {
			return err
		}
		if len(p.roi) != 2*r {
			return fmt.Errorf("roi %q: want %d values", a.String(AttrResizeROI), 2*r)
		}
	}
	return nil
}

func inferResize(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	p, err := resizeParamsOf(in, a)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: cloneDims(p.sizes)}}, nil
}

// resizeAxis is the 1-D resampling of one axis: output j reads taps
// idx[j·n:(j+1)·n] (already clamped to the input) with weights w, or is
// the extrapolation value when out[j] is set.
type resizeAxis struct {
	in, out, n int
	idx        []int
	w          []float64
	outside    []bool
	identity   bool
}

// coord maps output coordinate x of an axis to the input coordinate;
// ok is false where tf_crop_and_resize extrapolates.
func (p *resizeParams) coord1(x float64, in, out int, scale, r0, r1 float64) (float64, bool) {
	outW := scale * float64(in) // the float output length, as ONNX's reference uses it
	fin := float64(in)
	switch p.coord {
	case "align_corners":
		if outW == 1 {
			return 0, true
		}
		return x * (fin - 1) / (outW - 1), true
	case "asymmetric":
		return x / scale, true
	case "tf_half_pixel_for_nn":
		return (x + 0.5) / scale, true
	case "tf_crop_and_resize":
		var xo float64
		if outW == 1 {
			xo = (r1 - r0) * (fin - 1) / 2
		} else {
			xo = x * (r1 - r0) * (fin - 1) / (outW - 1)
		}
		xo += r0 * (fin - 1)
		return xo, xo >= 0 && xo <= fin-1
	case "pytorch_half_pixel":
		if outW == 1 {
			return -0.5, true
		}
		return (x+0.5)/scale - 0.5, true
	case "half_pixel_symmetric":
		adj := float64(out) / outW
		return fin/2*(1-adj) + (x+0.5)/scale - 0.5, true
	}
	return (x+0.5)/scale - 0.5, true
}

func cubicWeight(x, a float64) float64 {
	x = math.Abs(x)
	switch {
	case x <= 1:
		return ((a+2)*x-(a+3))*x*x + 1
	case x < 2:
		return ((a*x-5*a)*x+8*a)*x - 4*a
	}
	return 0
}

// plan builds the resampling of axis k.
func (p *resizeParams) plan(ax *resizeAxis, ar *wordArena, k, in, out int) error {
	*ax = resizeAxis{in: in, out: out}
	scale := p.scales[k]
	var r0, r1 float64
	if p.roi != nil {
		r0, r1 = p.roi[k], p.roi[len(p.roi)/2+k]
	}
	// The tap count: antialias stretches the filter by 1/scale.
	s := min(scale, 1.0)
	if p.aa && p.mode != "nearest" && s < 4.0/resizeMaxTapsPerPixel {
		return fmt.Errorf("axis %d: antialiased scale %v needs too many taps per pixel", k, scale)
	}
	var start int
	switch {
	case p.mode == "nearest":
		ax.n = 1
	case p.mode == "linear" && !p.aa:
		ax.n, start = 2, 0
	case p.mode == "linear":
		start = int(math.Floor(-1/s)) + 1
		ax.n = 2 - 2*start
	case !p.aa:
		ax.n, start = 4, -1
	default:
		start = int(math.Floor(-2/s)) + 1
		ax.n = 2 - 2*start
	}
	if ax.n < 1 || ax.n > resizeMaxTapsPerPixel {
		return fmt.Errorf("axis %d: scale %v needs %d taps per pixel", k, scale, ax.n)
	}
	ax.idx, ax.w, ax.outside = ar.ints(out*ax.n), ar.f64(out*ax.n), ar.bools(out)
	ax.identity = in == out
	for j := range out {
		xo, ok := p.coord1(float64(j), in, out, scale, r0, r1)
		if !ok {
			ax.outside[j] = true
			ax.identity = false
			continue
		}
		// base is the neighbour left of xo, with ratio in (0, 1] (an
		// integral xo takes the left neighbour with ratio 1), as ONNX's
		// reference picks neighbours.
		// A coordinate far outside reads only edge taps either way; the
		// clamp keeps the index arithmetic small.
		lim := float64(ax.n + 2)
		xo = math.Max(-lim, math.Min(xo, float64(in)+lim))
		base := math.Ceil(xo) - 1
		ratio := xo - base
		ib := int(base)
		idx, w := ax.idx[j*ax.n:(j+1)*ax.n], ax.w[j*ax.n:(j+1)*ax.n]
		switch {
		case p.mode == "nearest":
			pick := ib + 1
			if ratio != 1 {
				switch p.near {
				case "round_prefer_floor":
					if ratio <= 0.5 {
						pick = ib
					}
				case "round_prefer_ceil":
					if ratio < 0.5 {
						pick = ib
					}
				case "floor":
					pick = ib
				case "simple":
					// Upsample's (and Resize-10's) rule: floor when
					// upsampling, ceil when downsampling.
					if scale >= 1 {
						pick = ib
					}
				}
			}
			idx[0], w[0] = pick, 1
		case p.mode == "linear" && !p.aa:
			idx[0], idx[1] = ib, ib+1
			w[0], w[1] = 1-ratio, ratio
		case p.mode == "cubic" && !p.aa:
			a := p.a
			idx[0], idx[1], idx[2], idx[3] = ib-1, ib, ib+1, ib+2
			w[0] = ((a*(ratio+1)-5*a)*(ratio+1)+8*a)*(ratio+1) - 4*a
			w[1] = ((a+2)*ratio-(a+3))*ratio*ratio + 1
			w[2] = ((a+2)*(1-ratio)-(a+3))*(1-ratio)*(1-ratio) + 1
			w[3] = ((a*((1-ratio)+1)-5*a)*((1-ratio)+1)+8*a)*((1-ratio)+1) - 4*a
		default:
			sum := 0.0
			for t := range ax.n {
				d := float64(start+t) - ratio
				if p.mode == "linear" {
					w[t] = math.Max(0, math.Min(1, 1-math.Abs(d*s)))
				} else {
					w[t] = cubicWeight(s*d, p.a)
				}
				idx[t] = ib + start + t
				sum += w[t]
			}
			for t := range w {
				w[t] /= sum
			}
		}
		if p.exclude && p.mode != "nearest" {
			sum := 0.0
			for t, i := range idx {
				if i < 0 || i >= in {
					w[t] = 0
				}
				sum += w[t]
			}
			for t := range w {
				w[t] /= sum
			}
		}
		for t, i := range idx {
			idx[t] = max(0, min(i, in-1))
			if w[t] != 0 && (idx[t] != j || w[t] != 1) {
				ax.identity = false
			}
		}
	}
	return nil
}

func resizeKernel(t *Task, args [][]byte) error {
	var ar wordArena
	defer ar.release()
	var p resizeParams
	// The parsed scales and roi go to pooled scratch: stack arrays would
	// escape through p.
	nf := 2 * len(t.Inputs[0].Dims)
	if err := resizeParamsInto(&p, t.Inputs, t.Attrs, ar.f64(nf)[:0], ar.f64(nf)[:0]); err != nil {
		return kernelError(t, "%v", err)
	}
	xd := t.Inputs[0]
	r := len(xd.Dims)
	var axv [maxStackRank]resizeAxis
	axes := axv[:0]
	if r > len(axv) {
		axes = make([]resizeAxis, 0, r)
	}
	axes = axes[:r]
	for k := range r {
		if err := p.plan(&axes[k], &ar, k, int(xd.Dims[k]), int(p.sizes[k])); err != nil {
			return kernelError(t, "%v", err)
		}
	}
	if p.mode == "nearest" {
		resizeNearest(xd, &p, axes, &ar, args[0], args[1])
		return nil
	}
	cur := ar.f64(prod(xd.Dims))
	readF64(cur, xd.DataType, args[0])
	var dv [maxStackRank]int64
	dims := append(dv[:0], xd.Dims...)
	// Innermost axis first: ONNX's reference resamples the last axis,
	// then the ones before it on those results, so an extrapolated inner
	// value is interpolated by the outer axes like any other.
	for k := r - 1; k >= 0; k-- {
		ax := &axes[k]
		if ax.identity {
			continue
		}
		outer, inner := prod(dims[:k]), prod(dims[k+1:])
		next := ar.f64(outer * ax.out * inner)
		for o := range outer {
			src := cur[o*ax.in*inner : (o+1)*ax.in*inner]
			dst := next[o*ax.out*inner : (o+1)*ax.out*inner]
			for j := range ax.out {
				row := dst[j*inner : (j+1)*inner]
				if ax.outside[j] {
					for i := range row {
						row[i] = p.extrap
					}
					continue
				}
				for tp := range ax.n {
					w := ax.w[j*ax.n+tp]
					if w == 0 {
						continue
					}
					s := src[ax.idx[j*ax.n+tp]*inner:]
					for i := range row {
						row[i] += w * s[i]
					}
				}
			}
		}
		dims[k] = int64(ax.out)
		cur = next
	}
	writeFromF64(args[1], xd.DataType, cur)
	return nil
}

// resizeNearest copies, for every output element, the input element the
// per-axis picks select (or writes the extrapolation value).
func resizeNearest(xd TensorDesc, p *resizeParams, axes []resizeAxis, ar *wordArena, in, out []byte) {
	r := len(axes)
	es := xd.DataType.Size()
	// offs[k][j]: the input element offset axis k's output j contributes,
	// -1 when it extrapolates.
	var offv [maxStackRank][]int
	offs := offv[:0]
	if r > len(offv) {
		offs = make([][]int, 0, r)
	}
	offs = offs[:r]
	stride := 1
	for k := r - 1; k >= 0; k-- {
		ax := &axes[k]
		offs[k] = ar.ints(ax.out)
		for j := range ax.out {
			if ax.outside[j] {
				offs[k][j] = -1
			} else {
				offs[k][j] = ax.idx[j] * stride
			}
		}
		stride *= ax.in
	}
	var extv [8]byte
	var ext []byte
	if p.roi != nil {
		ext = extv[:0]
		if es > len(extv) {
			ext = make([]byte, 0, es)
		}
		ext = ext[:es]
		one := [1]float64{p.extrap}
		writeFromF64(ext, xd.DataType, one[:])
	}
	n := prod(p.sizes)
	if n == 0 {
		return
	}
	var posv [maxStackRank]int
	pos := posv[:0]
	if r > len(posv) {
		pos = make([]int, 0, r)
	}
	pos = pos[:r]
	last := int(p.sizes[r-1])
	for o := 0; o < n; o += last {
		base, outside := 0, false
		for k := range r - 1 {
			if v := offs[k][pos[k]]; v < 0 {
				outside = true
			} else {
				base += v
			}
		}
		dst := out[o*es : (o+last)*es]
		for j := range last {
			v := offs[r-1][j]
			if outside || v < 0 {
				copy(dst[j*es:], ext)
				continue
			}
			copy(dst[j*es:(j+1)*es], in[(base+v)*es:(base+v+1)*es])
		}
		for k := r - 2; k >= 0; k-- {
			pos[k]++
			if pos[k] < int(p.sizes[k]) {
				break
			}
			pos[k] = 0
		}
	}
}
