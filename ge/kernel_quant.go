package ge

import (
	"fmt"
	"math"

	"github.com/ascend-go/cann/acl"
)

// Linear quantization, as ONNX defines it: a real value r and its
// quantized q are related by r = (q - zero_point) · scale.
//
//   - QuantizeLinear (x, scale, zero_point): q = saturate(zero_point +
//     round(x / scale)), rounding half to even, in the type of zero_point
//     (int8, uint8, int16 or int32); x / scale is a float32 division, as
//     ONNX's reference computes it.
//   - DequantizeLinear (x, scale, zero_point): y = (x - zero_point) · scale
//     in the type of scale.
//
// Both take scale and zero_point per tensor (one element) or per slice
// along AttrAxis (1-D of that dim's length).
//
//   - DynamicQuantizeLinear (x): uint8 y, float32 scale and uint8
//     zero_point chosen so that [min(0, min x), max(0, max x)] maps onto
//     [0, 255]; an all-zero x gets scale 0 and zero_point 0 (and y 0).
//   - MatMulInteger (A, B, a_zero_point, b_zero_point): int32
//     Σ (A - a_zp)(B - b_zp) over numpy-matmul operands of rank >= 2; a_zp
//     is per tensor or per row of A ([M]), b_zp per tensor or per column
//     of B ([N]).
//   - QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp):
//     MatMulInteger's sum requantized: saturate(round(acc · a_scale ·
//     b_scale / y_scale) + y_zp), scales per tensor or per row/column.
//   - ConvInteger (x, w, x_zp, w_zp): int32 convolution of (x - x_zp) and
//     (w - w_zp) with Conv's geometry attributes; w_zp per tensor or per
//     output channel.
//   - QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B]):
//     ConvInteger's sum plus the int32 bias B, requantized as QLinearMatMul
//     with w_scale per tensor or per output channel.
//
// Integer sums are exact (int64); the requantization multiplier is
// computed in float64.
const (
	OpQuantizeLinear        OpType = 530
	OpDequantizeLinear      OpType = 531
	OpDynamicQuantizeLinear OpType = 532
	OpMatMulInteger         OpType = 533
	OpQLinearMatMul         OpType = 534
	OpConvInteger           OpType = 535
	OpQLinearConv           OpType = 536
)

func init() {
	axis := map[string]AttrKind{AttrAxis: AttrInt}
	registerOp(OpQuantizeLinear, &opSpec{name: "QuantizeLinear", minIn: 3, maxIn: 3, attrs: axis, infer: inferQuantize, kernel: quantizeKernel})
	registerOp(OpDequantizeLinear, &opSpec{name: "DequantizeLinear", minIn: 3, maxIn: 3, attrs: axis, infer: inferDequantize, kernel: dequantizeKernel})
	registerOp(OpDynamicQuantizeLinear, &opSpec{name: "DynamicQuantizeLinear", minIn: 1, maxIn: 1, infer: inferDynQuant, kernel: dynQuantKernel})
	registerOp(OpMatMulInteger, &opSpec{name: "MatMulInteger", minIn: 4, maxIn: 4, infer: inferQMatMul, kernel: qmatmulKernel})
	registerOp(OpQLinearMatMul, &opSpec{name: "QLinearMatMul", minIn: 8, maxIn: 8, infer: inferQMatMul, kernel: qmatmulKernel})
	conv := map[string]AttrKind{AttrStrides: AttrInts, AttrPads: AttrInts, AttrDilations: AttrInts, AttrGroups: AttrInt}
	registerOp(OpConvInteger, &opSpec{name: "ConvInteger", minIn: 4, maxIn: 4, attrs: conv, infer: inferQConv, kernel: qconvKernel})
	registerOp(OpQLinearConv, &opSpec{name: "QLinearConv", minIn: 8, maxIn: 9, attrs: conv, infer: inferQConv, kernel: qconvKernel})
}

// quantType reports whether t can hold quantized values.
func quantType(t acl.DataType) bool {
	return t == acl.Int8 || t == acl.Uint8 || t == acl.Int16 || t == acl.Int32
}

func scaleType(t acl.DataType) bool { return isFloat(t) || t == acl.Float64 }

// quantAxis checks that scale and zero point are per tensor or 1-D along
// axis of x, and returns the axis (-1 for per tensor) and the number of
// elements after it.
func quantAxis(x []int64, scale, zp TensorDesc, a Attrs) (axis, inner int, err error) {
	if !dimsEqual(scale.Dims, zp.Dims) {
		return 0, 0, fmt.Errorf("scale %s and zero point %s differ in shape", dimsString(scale.Dims), dimsString(zp.Dims))
	}
	if scale.NumElements() == 1 && len(scale.Dims) <= 1 {
		return -1, 1, nil
	}
	ax, err := normAxis(a.Int(AttrAxis, 1), len(x))
	if err != nil {
		return 0, 0, err
	}
	if len(scale.Dims) != 1 || scale.Dims[0] != x[ax] {
		return 0, 0, fmt.Errorf("scale %s must hold one value or %d (dim %d of %s)", dimsString(scale.Dims), x[ax], ax, dimsString(x))
	}
	return ax, prod(x[ax+1:]), nil
}

func inferQuantize(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, s, zp := in[0], in[1], in[2]
	if !scaleType(x.DataType) || s.DataType != x.DataType {
		return nil, &dtypeError{fmt.Sprintf("x (%s) and scale (%s) must be one float type", x.DataType, s.DataType)}
	}
	if !quantType(zp.DataType) {
		return nil, &dtypeError{fmt.Sprintf("zero point has data type %s, want int8, uint8, int16 or int32", zp.DataType)}
	}
	if _, _, err := quantAxis(x.Dims, s, zp, a); err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: zp.DataType, Format: x.Format, Dims: cloneDims(x.Dims)}}, nil
}

func inferDequantize(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, s, zp := in[0], in[1], in[2]
	if !quantType(x.DataType) || zp.DataType != x.DataType {
		return nil, &dtypeError{fmt.Sprintf("x (%s) and zero point (%s) must be one of int8, uint8, int16, int32", x.DataType, zp.DataType)}
	}
	if !scaleType(s.DataType) {
		return nil, &dtypeError{fmt.Sprintf("scale has data type %s, want a float type", s.DataType)}
	}
	if _, _, err := quantAxis(x.Dims, s, zp, a); err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: s.DataType, Format: x.Format, Dims: cloneDims(x.Dims)}}, nil
}

// channelOf maps element i of x to its scale/zero-point index.
func channelOf(i, axis, inner int, n int64) int {
	if axis < 0 {
		return 0
	}
	return (i / inner) % int(n)
}

// saturateRound rounds v half to even and clamps it to t's range.
func saturateRound(v float64, t acl.DataType) int64 {
	lo, hi := intRange(t)
	r := math.RoundToEven(v)
	if r != r {
		return 0
	}
	return int64(math.Max(lo, math.Min(hi, r)))
}

func quantizeKernel(t *Task, args [][]byte) error {
	x, s, zp := t.Inputs[0], t.Inputs[1], t.Inputs[2]
	axis, inner, err := quantAxis(x.Dims, s, zp, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	nc := s.NumElements()
	xv := make([]float64, prod(x.Dims))
	readF64(xv, x.DataType, args[0])
	sv := make([]float64, nc)
	readF64(sv, s.DataType, args[1])
	zv := make([]int64, nc)
	readInts(zv, zp.DataType, args[2])
	out := make([]int64, len(xv))
	dt := t.Outputs[0].DataType
	for i, v := range xv {
		c := channelOf(i, axis, inner, nc)
		q := v / sv[c]
		if x.DataType != acl.Float64 {
			q = float64(float32(v) / float32(sv[c]))
		}
		out[i] = saturateRound(math.RoundToEven(q)+float64(zv[c]), dt)
	}
	writeFromInts(args[3], dt, out)
	return nil
}

func dequantizeKernel(t *Task, args [][]byte) error {
	x, s, zp := t.Inputs[0], t.Inputs[1], t.Inputs[2]
	axis, inner, err := quantAxis(x.Dims, s, zp, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	nc := s.NumElements()
	xv := make([]int64, prod(x.Dims))
	readInts(xv, x.DataType, args[0])
	sv := make([]float64, nc)
	readF64(sv, s.DataType, args[1])
	zv := make([]int64, nc)
	readInts(zv, zp.DataType, args[2])
	out := make([]float64, len(xv))
	for i, v := range xv {
		c := channelOf(i, axis, inner, nc)
		out[i] = float64(v-zv[c]) * sv[c]
	}
	writeFromF64(args[3], t.Outputs[0].DataType, out)
	return nil
}

func inferDynQuant(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	if in[0].DataType != acl.Float32 {
		return nil, &dtypeError{fmt.Sprintf("x has data type %s, want float32", in[0].DataType)}
	}
	return []TensorDesc{{DataType: acl.Uint8, Format: in[0].Format, Dims: cloneDims(in[0].Dims)},
		{DataType: acl.Float32, Format: acl.FormatND, Dims: []int64{}},
		{DataType: acl.Uint8, Format: acl.FormatND, Dims: []int64{}}}, nil
}

// dynQuantKernel follows ONNX's reference in float32 arithmetic.
func dynQuantKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	x := readFloats(&s, acl.Float32, args[0], prod(t.Inputs[0].Dims))
	var lo, hi float32
	for _, v := range x {
		if v != v {
			return kernelError(t, "x holds NaN")
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	scale := (hi - lo) / 255
	var zp int64
	out := make([]int64, len(x))
	if scale != 0 && !math.IsInf(float64(scale), 0) {
		zp = saturateRound(float64(0-lo/scale), acl.Uint8)
		for i, v := range x {
			out[i] = saturateRound(math.RoundToEven(float64(v/scale))+float64(zp), acl.Uint8)
		}
	} else if scale != 0 {
		return kernelError(t, "x spans an infinite range")
	}
	writeFromInts(args[1], acl.Uint8, out)
	writeFromF64(args[2], acl.Float32, []float64{float64(scale)})
	writeFromInts(args[3], acl.Uint8, []int64{zp})
	return nil
}

// qmmLayout returns the positions of the operands of MatMulInteger (A, B,
// a_zp, b_zp) or QLinearMatMul: a, b, their zero points and scales, and
// the output's (scales -1 when absent).
func qmmLayout(op OpType) (a, b, az, bz, as, bs, ys, yz int) {
	if op == OpMatMulInteger {
		return 0, 1, 2, 3, -1, -1, -1, -1
	}
	return 0, 3, 2, 5, 1, 4, 6, 7
}

// perRowOrTensor checks a zero point or scale: one element, or n.
func perRowOrTensor(what string, d TensorDesc, n int64) error {
	if k := d.NumElements(); k != 1 && k != n {
		return fmt.Errorf("%s %s must hold one value or %d", what, dimsString(d.Dims), n)
	}
	return nil
}

func inferQMatMul(in []TensorDesc, _ Attrs) ([]TensorDesc, error) {
	ai, bi, az, bz, as, bs, ys, yz := qmmLayout(map[bool]OpType{true: OpMatMulInteger, false: OpQLinearMatMul}[len(in) == 4])
	for _, i := range []int{ai, bi} {
		if in[i].DataType != acl.Int8 && in[i].DataType != acl.Uint8 {
			return nil, &dtypeError{fmt.Sprintf("input %d has data type %s, want int8 or uint8", i, in[i].DataType)}
		}
	}
	if in[az].DataType != in[ai].DataType || in[bz].DataType != in[bi].DataType {
		return nil, &dtypeError{"zero points must have their operand's type"}
	}
	m, _, n, batch, err := matmulDims([]TensorDesc{in[ai], in[bi]}, nil)
	if err != nil {
		return nil, err
	}
	if err := perRowOrTensor("a zero point", in[az], m); err != nil {
		return nil, err
	}
	if err := perRowOrTensor("b zero point", in[bz], n); err != nil {
		return nil, err
	}
	dt := acl.Int32
	if ys >= 0 {
		for _, i := range []int{as, bs, ys} {
			if !scaleType(in[i].DataType) {
				return nil, &dtypeError{fmt.Sprintf("scale input %d has data type %s", i, in[i].DataType)}
			}
		}
		if err := perRowOrTensor("a scale", in[as], m); err != nil {
			return nil, err
		}
		if err := perRowOrTensor("b scale", in[bs], n); err != nil {
			return nil, err
		}
		if in[ys].NumElements() != 1 || in[yz].NumElements() != 1 {
			return nil, fmt.Errorf("y scale and zero point must hold one value")
		}
		if !quantType(in[yz].DataType) {
			return nil, &dtypeError{fmt.Sprintf("y zero point has data type %s", in[yz].DataType)}
		}
		dt = in[yz].DataType
	}
	return []TensorDesc{{DataType: dt, Format: acl.FormatND, Dims: append(batch, m, n)}}, nil
}

// readI64 and readF64s decode a whole int or float tensor.
func readI64(d TensorDesc, b []byte) []int64 {
	v := make([]int64, prod(d.Dims))
	readInts(v, d.DataType, b)
	return v
}

func readF64s(d TensorDesc, b []byte) []float64 {
	v := make([]float64, prod(d.Dims))
	readF64(v, d.DataType, b)
	return v
}

// pick returns v[i], or v[0] for a per-tensor value.
func pick[T any](v []T, i int) T {
	if len(v) == 1 {
		return v[0]
	}
	return v[i]
}

func qmatmulKernel(t *Task, args [][]byte) error {
	in := t.Inputs
	ai, bi, az, bz, as, bs, ys, yz := qmmLayout(t.Op)
	m, k, n, batch, err := matmulDims([]TensorDesc{in[ai], in[bi]}, nil)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	M, K, N := int(m), int(k), int(n)
	a, b := readI64(in[ai], args[ai]), readI64(in[bi], args[bi])
	azv, bzv := readI64(in[az], args[az]), readI64(in[bz], args[bz])
	ad, bd := in[ai].Dims, in[bi].Dims
	abatch, bbatch := ad[:len(ad)-2], bd[:len(bd)-2]
	acc := make([]int64, prod(batch)*M*N)
	row := make([]int64, K)
	bcastWalk(batch, [][]int64{abatch, bbatch}, func(bi int, o []int) {
		am, bm := a[o[0]*M*K:], b[o[1]*K*N:]
		out := acc[bi*M*N:]
		for i := range M {
			za := pick(azv, i)
			for p := range K {
				row[p] = am[i*K+p] - za
			}
			for j := range N {
				zb := pick(bzv, j)
				var s int64
				for p := range K {
					s += row[p] * (bm[p*N+j] - zb)
				}
				out[i*N+j] = s
			}
		}
	})
	outArg := args[len(in)]
	if ys < 0 {
		writeFromInts(outArg, acl.Int32, wrapInt32(acc))
		return nil
	}
	asv, bsv := readF64s(in[as], args[as]), readF64s(in[bs], args[bs])
	ysv, yzv := readF64s(in[ys], args[ys])[0], readI64(in[yz], args[yz])[0]
	dt := t.Outputs[0].DataType
	for idx := range acc {
		i, j := (idx/N)%M, idx%N
		mul := pick(asv, i) * pick(bsv, j) / ysv
		acc[idx] = saturateRound(float64(acc[idx])*mul+float64(yzv), dt)
	}
	writeFromInts(outArg, dt, acc)
	return nil
}

// wrapInt32 keeps sums as int32 does (they fit but for pathological K).
func wrapInt32(v []int64) []int64 {
	for i, x := range v {
		v[i] = int64(int32(x))
	}
	return v
}

// qconvLayout returns the positions of x, w, their zero points and scales,
// and the output's scale and zero point (-1 when absent).
func qconvLayout(op OpType) (x, w, xz, wz, xs, ws, ys, yz int) {
	if op == OpConvInteger {
		return 0, 1, 2, 3, -1, -1, -1, -1
	}
	return 0, 3, 2, 5, 1, 4, 6, 7
}

func inferQConv(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	xi, wi, xz, wz, xs, ws, ys, yz := qconvLayout(map[bool]OpType{true: OpConvInteger, false: OpQLinearConv}[len(in) == 4])
	for _, i := range []int{xi, wi} {
		if in[i].DataType != acl.Int8 && in[i].DataType != acl.Uint8 {
			return nil, &dtypeError{fmt.Sprintf("input %d has data type %s, want int8 or uint8", i, in[i].DataType)}
		}
	}
	if in[xz].DataType != in[xi].DataType || in[wz].DataType != in[wi].DataType {
		return nil, &dtypeError{"zero points must have their operand's type"}
	}
	w, m, err := qconvGeometry(in[xi].Dims, in[wi].Dims, a)
	if err != nil {
		return nil, err
	}
	if in[xz].NumElements() != 1 {
		return nil, fmt.Errorf("x zero point must hold one value")
	}
	if k := in[wz].NumElements(); k != 1 && k != m {
		return nil, fmt.Errorf("w zero point must hold one value or %d", m)
	}
	dt := acl.Int32
	if ys >= 0 {
		for _, i := range []int{xs, ws, ys} {
			if !scaleType(in[i].DataType) {
				return nil, &dtypeError{fmt.Sprintf("scale input %d has data type %s", i, in[i].DataType)}
			}
		}
		if in[xs].NumElements() != 1 || in[ys].NumElements() != 1 || in[yz].NumElements() != 1 {
			return nil, fmt.Errorf("x and y scales and zero points must hold one value")
		}
		if k := in[ws].NumElements(); k != 1 && k != m {
			return nil, fmt.Errorf("w scale must hold one value or %d", m)
		}
		if !quantType(in[yz].DataType) {
			return nil, &dtypeError{fmt.Sprintf("y zero point has data type %s", in[yz].DataType)}
		}
		if len(in) == 9 && (in[8].DataType != acl.Int32 || !dimsEqual(in[8].Dims, []int64{m})) {
			return nil, fmt.Errorf("bias %s %s must be int32 [%d]", in[8].DataType, dimsString(in[8].Dims), m)
		}
		dt = in[yz].DataType
	}
	return []TensorDesc{{DataType: dt, Format: in[xi].Format, Dims: w.outShape(in[xi].Dims[0], m)}}, nil
}

// qconvGeometry is Conv's geometry check for the integer convolutions.
func qconvGeometry(x, wt []int64, a Attrs) (window, int64, error) {
	if len(wt) != len(x) {
		return window{}, 0, fmt.Errorf("weight %s and input %s differ in rank", dimsString(wt), dimsString(x))
	}
	w, err := spatialWindow(x, wt[2:], a)
	if err != nil {
		return window{}, 0, err
	}
	g := a.Int(AttrGroups, 1)
	if g < 1 || x[1]%g != 0 || wt[1] != x[1]/g || wt[0]%g != 0 {
		return window{}, 0, fmt.Errorf("weight %s does not fit %d channels in %d groups", dimsString(wt), x[1], g)
	}
	if err := w.outDims(false); err != nil {
		return window{}, 0, err
	}
	return w, wt[0], nil
}

func qconvKernel(t *Task, args [][]byte) error {
	in := t.Inputs
	xi, wi, xz, wz, xs, ws, ys, yz := qconvLayout(t.Op)
	w, m64, err := qconvGeometry(in[xi].Dims, in[wi].Dims, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	m, groups := int(m64), int(t.Attrs.Int(AttrGroups, 1))
	x, wt := readI64(in[xi], args[xi]), readI64(in[wi], args[wi])
	xzp, wzv := readI64(in[xz], args[xz])[0], readI64(in[wz], args[wz])
	for i := range x {
		x[i] -= xzp
	}
	ks := w.kSize()
	for i := range wt {
		wt[i] -= pick(wzv, i/(len(wt)/m))
	}
	n, c := int(in[xi].Dims[0]), int(in[xi].Dims[1])
	cg, mg := c/groups, m/groups
	pin, pout := w.inSize(), w.outSize()
	acc := make([]int64, n*m*pout)
	for b := range n {
		for oc := range m {
			g := oc / mg
			wo := wt[oc*cg*ks:]
			out := acc[(b*m+oc)*pout:]
			o := 0
			for o0 := range w.out[0] {
				for o1 := range w.out[1] {
					for o2 := range w.out[2] {
						var s int64
						for ic := range cg {
							xc := x[(b*c+g*cg+ic)*pin:]
							wc := wo[ic*ks:]
							kk := 0
							for k0 := range w.k[0] {
								i0 := o0*w.s[0] - w.pb[0] + k0*w.d[0]
								for k1 := range w.k[1] {
									i1 := o1*w.s[1] - w.pb[1] + k1*w.d[1]
									for k2 := range w.k[2] {
										i2 := o2*w.s[2] - w.pb[2] + k2*w.d[2]
										if i0 >= 0 && i0 < w.in[0] && i1 >= 0 && i1 < w.in[1] && i2 >= 0 && i2 < w.in[2] {
											s += xc[(i0*w.in[1]+i1)*w.in[2]+i2] * wc[kk]
										}
										kk++
									}
								}
							}
						}
						out[o] = s
						o++
					}
				}
			}
		}
	}
	outArg := args[len(in)]
	if ys < 0 {
		writeFromInts(outArg, acl.Int32, wrapInt32(acc))
		return nil
	}
	var bias []int64
	if len(in) == 9 {
		bias = readI64(in[8], args[8])
	}
	xsv, wsv, ysv := readF64s(in[xs], args[xs])[0], readF64s(in[ws], args[ws]), readF64s(in[ys], args[ys])[0]
	yzv := readI64(in[yz], args[yz])[0]
	dt := t.Outputs[0].DataType
	for i := range acc {
		oc := (i / pout) % m
		v := acc[i]
		if bias != nil {
			v += bias[oc]
		}
		acc[i] = saturateRound(float64(v)*(xsv*pick(wsv, oc)/ysv)+float64(yzv), dt)
	}
	writeFromInts(outArg, dt, acc)
	return nil
}
