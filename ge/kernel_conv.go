package ge

import (
	"fmt"
	"sync"

	sg "github.com/ascend-go/cann/internal/sgemm"
)

// Convolutions. Conv is one implicit GEMM per batch and group (the
// receptive fields packed straight from the image, internal/sgemm.Im2col,
// 2-D ones on sgemm.ConvGemmImages' grid of phase planes, all images of
// an ungrouped one in one product); ConvTranspose is one sgemm per batch
// and group followed by col2im (col2tiles when the windows tile the
// output, kernel_conv_tiles.go). Both take 1 to 3 spatial dims, groups
// (depthwise included), strides, dilations and explicit pads (an
// importer resolves auto_pad), and an optional bias; float16/bfloat16
// compute in float32 and round once.
const (
	OpConv          OpType = 72
	OpConvTranspose OpType = 73
)

func init() {
	attrs := map[string]AttrKind{AttrStrides: AttrInts, AttrPads: AttrInts, AttrDilations: AttrInts,
		AttrGroups: AttrInt, AttrOutputPadding: AttrInts}
	registerOp(OpConv, &opSpec{name: "Conv", minIn: 2, maxIn: 3, attrs: attrs, infer: func(in []TensorDesc, a Attrs) ([]TensorDesc, error) { return inferConvOp(OpConv, in, a) }, kernel: convKernel})
	registerOp(OpConvTranspose, &opSpec{name: "ConvTranspose", minIn: 2, maxIn: 3, attrs: attrs, infer: func(in []TensorDesc, a Attrs) ([]TensorDesc, error) { return inferConvOp(OpConvTranspose, in, a) }, kernel: convKernel})
}

// Conv convolves x [N, C, spatial...] with w [M, C/groups, kernel...] and
// adds bias [M] when it is not nil. Set strides, pads, dilations and
// groups with WithAttr (AttrStrides, AttrPads, AttrDilations, AttrGroups).
func (g *Graph) Conv(x, w, bias *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpConv, convInputs(x, w, bias), nil, opts)
}

// ConvTranspose is the gradient of Conv with respect to its input: x
// [N, C, spatial...], w [C, M/groups, kernel...], bias [M] or nil;
// AttrOutputPadding adds to the end of each output dim.
func (g *Graph) ConvTranspose(x, w, bias *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpConvTranspose, convInputs(x, w, bias), nil, opts)
}

func convInputs(x, w, bias *Tensor) []*Tensor {
	if bias == nil {
		return []*Tensor{x, w}
	}
	return []*Tensor{x, w, bias}
}

// convGeometry checks a Conv/ConvTranspose and returns its window, groups
// and output channels.
func convGeometry(op OpType, in []TensorDesc, a Attrs) (w window, groups, m int, err error) {
	if err := needFloat("input 0", in[0].DataType); err != nil {
		return window{}, 0, 0, err
	}
	if err := sameType(in); err != nil {
		return window{}, 0, 0, err
	}
	x, wt := in[0].Dims, in[1].Dims
	if len(wt) != len(x) {
		return window{}, 0, 0, fmt.Errorf("weight %s and input %s differ in rank", dimsString(wt), dimsString(x))
	}
	if len(x) < 3 {
		return window{}, 0, 0, fmt.Errorf("input %s must be [N, C] and 1 to %d spatial dims", dimsString(x), maxSpatial)
	}
	g := a.Int(AttrGroups, 1)
	c := x[1]
	if g < 1 || c%g != 0 {
		return window{}, 0, 0, fmt.Errorf("groups %d must divide the %d input channels", g, c)
	}
	if w, err = spatialWindow(x, wt[2:], a); err != nil {
		return window{}, 0, 0, err
	}
	var mOut int64
	if op == OpConv {
		if wt[1] != c/g || wt[0]%g != 0 {
			return window{}, 0, 0, fmt.Errorf("weight %s does not fit %d channels in %d groups", dimsString(wt), c, g)
		}
		if err := w.outDims(false); err != nil {
			return window{}, 0, 0, err
		}
		mOut = wt[0]
	} else {
		if wt[0] != c {
			return window{}, 0, 0, fmt.Errorf("weight %s must have %d input channels first", dimsString(wt), c)
		}
		op := a.Ints(AttrOutputPadding)
		if op != nil && len(op) != w.sp {
			return window{}, 0, 0, fmt.Errorf("output_padding %s: want %d values", dimsString(op), w.sp)
		}
		for i := range w.sp {
			j := maxSpatial - w.sp + i
			var extra int64
			if op != nil {
				extra = op[i]
			}
			if extra < 0 || extra >= int64(max(w.s[j], w.d[j])) {
				return window{}, 0, 0, fmt.Errorf("output_padding %d must be in [0, max(stride, dilation))", extra)
			}
			o := int64(w.s[j])*int64(w.in[j]-1) + extra + int64(w.effK(j)) - int64(w.pb[j]+w.pe[j])
			if o < 1 || o > MaxDim {
				return window{}, 0, 0, fmt.Errorf("output dim %d is %d", i, o)
			}
			w.out[j] = int(o)
		}
		mOut = wt[1] * g
	}
	if len(in) == 3 && (len(in[2].Dims) != 1 || in[2].Dims[0] != mOut) {
		return window{}, 0, 0, fmt.Errorf("bias %s must be [%d]", dimsString(in[2].Dims), mOut)
	}
	return w, int(g), int(mOut), nil
}

func inferConvOp(op OpType, in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	w, _, m, err := convGeometry(op, in, a)
	if err != nil {
		return nil, err
	}
	dims := w.outShape(in[0].Dims[0], int64(m))
	if err := checkDesc(TensorDesc{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}); err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

// convKernel runs Conv, ConvTranspose and FusedConv. A convolution's bias
// and FusedConv's activation are the epilogue of each group's GEMM,
// applied per tile while it is in cache (bias then activation, in float32,
// before any rounding into a half output type); a transposed
// convolution adds its bias after col2im.
func convKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	op := t.Op
	if op == OpFusedConv {
		op = OpConv
	}
	w, groups, m, err := convGeometry(op, t.Inputs, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	epi, err := epilogueOf(t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	xd, wd, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	dt := xd.DataType
	x := readFloats(&s, dt, args[0], prod(xd.Dims))
	wt := readFloats(&s, dt, args[1], prod(wd.Dims))
	outArg := args[len(t.Inputs)]
	out := outFloats(&s, dt, outArg, prod(od.Dims))
	var bias []float32
	if len(t.Inputs) == 3 {
		bias = readFloats(&s, dt, args[2], m)
	}
	n, c := int(xd.Dims[0]), int(xd.Dims[1])
	cg, mg := c/groups, m/groups
	ks, pin, pout := w.kSize(), w.inSize(), w.outSize()
	kk := cg * ks
	if op == OpConv && cg == 1 && groups > 1 {
		flat := w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1
		var pad, tmp []float32
		if flat {
			hp, wp := dwPadDims(&w)
			pad, tmp = s.f32(hp*wp), s.f32(dwTmpSize(&w))
		}
		ep := epi
		if bias != nil {
			ep.Bias, ep.BiasPerRow = bias, true
		}
		for b := range n {
			xb, ob := x[b*c*pin:(b+1)*c*pin], out[b*m*pout:(b+1)*m*pout]
			if flat {
				depthwise2D(&w, groups, m, xb, wt, ob, pad, tmp)
			} else {
				depthwiseConv(&w, groups, m, xb, wt, ob)
			}
			ep.Apply(ob, pout, m, pout) // the bias and activation a GEMM's epilogue would add
		}
	} else if op == OpConv {
		plain := ks == 1 && pin == pout && w.pb == [3]int{} && w.s == [3]int{1, 1, 1}
		// One implicit GEMM per image and group; without groups, one for
		// all the images (sgemm.ConvGemmImages: on its grid path they
		// share the product).
		images, calls := 1, n
		if groups == 1 && !plain && n > 0 {
			images, calls = n, 1
		}
		for b := range calls {
			for g := range groups {
				xg := x[(b*c+g*cg)*pin:]
				og := out[(b*m+g*mg)*pout : (b*m+(g+1)*mg)*pout]
				if images > 1 {
					og = out[:n*m*pout]
				}
				ep := epi
				if bias != nil {
					ep.Bias, ep.BiasPerRow = bias[g*mg:(g+1)*mg], true
				}
				call := sg.Call{M: mg, N: pout, K: kk, Alpha: 1, A: sg.Matrix{F32: wt[g*mg*kk:], Stride: kk}, C: og, LDC: pout, Epi: ep}
				var im *sg.Im2col
				if plain {
					// A 1×1 convolution without stride or padding is a plain product.
					call.B = sg.Matrix{F32: xg, Stride: pout}
				} else {
					// Implicit GEMM: the kernel packs the receptive fields
					// straight from the image (bit-identical to im2col then
					// the same GEMM, without writing the im2col matrix).
					// The description comes from a pool: the call keeps a
					// pointer to it.
					im = im2colPool.Get().(*sg.Im2col)
					*im = sg.Im2col{X: xg[:(images-1)*c*pin+cg*pin], C: cg, In: w.in, Out: w.out, K: w.k, Stride: w.s, Dil: w.d, Pad: w.pb}
					call.B = sg.Matrix{Im2col: im}
				}
				var err error
				if im != nil {
					err = sg.ConvGemmImages(&call, images, c*pin, m*pout)
				} else {
					err = sg.Gemm(&call)
				}
				if im != nil {
					*im = sg.Im2col{}
					im2colPool.Put(im)
				}
				if err != nil {
					return kernelError(t, "%v", err)
				}
			}
		}
	} else {
		// w is [C, M/g, k...]: group g's slice is [cg, mg·ks]; col = wᵀ·x.
		col := s.f32(mg * ks * pin)
		tiles := tilesOutput(&w)
		if !tiles {
			clear(out)
		}
		for b := range n {
			for g := range groups {
				xg := x[(b*c+g*cg)*pin:]
				sgemm(true, false, mg*ks, pin, cg, 1, wt[g*cg*mg*ks:], mg*ks, xg, pin, 0, col, pin)
				og := out[(b*m+g*mg)*pout:]
				if !tiles {
					col2im(&w, mg, col, og)
					continue
				}
				var gb []float32
				if bias != nil {
					gb = bias[g*mg : (g+1)*mg]
				}
				col2tiles(&w, mg, col, og, gb)
			}
		}
		if tiles {
			bias = nil // added by col2tiles
		}
	}
	if bias != nil && op == OpConvTranspose { // a Conv's bias is its GEMM's epilogue
		for b := range n {
			for j := range m {
				o := out[(b*m+j)*pout : (b*m+j+1)*pout]
				for i := range o {
					o[i] += bias[j]
				}
			}
		}
	}
	storeFloats(od.DataType, outArg, out)
	return nil
}

// im2colPool recycles the implicit GEMM's operand descriptions: the
// sgemm call keeps a pointer to one, so a fresh one per call would be a
// heap allocation per convolution group.
var im2colPool = sync.Pool{New: func() any { return new(sg.Im2col) }}

// col2im scatter-adds the columns of a transposed convolution into m
// output channels: rows (channel, kernel position), columns (input
// position); w.in is the transposed op's input and w.out its output. Each
// tap's range of input positions landing inside the output is computed
// once (tapRange), so the inner loop has no bounds tests.
func col2im(w *window, m int, col, out []float32) {
	pin, pout := w.inSize(), w.outSize()
	row := 0
	for ch := range m {
		oc := out[ch*pout : (ch+1)*pout]
		for k0 := range w.k[0] {
			off0 := k0*w.d[0] - w.pb[0]
			lo0, hi0 := tapRange(w.in[0], w.out[0], w.s[0], off0)
			for k1 := range w.k[1] {
				off1 := k1*w.d[1] - w.pb[1]
				lo1, hi1 := tapRange(w.in[1], w.out[1], w.s[1], off1)
				for k2 := range w.k[2] {
					off2 := k2*w.d[2] - w.pb[2]
					lo2, hi2 := tapRange(w.in[2], w.out[2], w.s[2], off2)
					src := col[row*pin : (row+1)*pin]
					row++
					s2 := w.s[2]
					for i0 := lo0; i0 < hi0; i0++ {
						o0 := i0*w.s[0] + off0
						for i1 := lo1; i1 < hi1; i1++ {
							o1 := i1*w.s[1] + off1
							dst := oc[(o0*w.out[1]+o1)*w.out[2]:]
							srow := src[(i0*w.in[1]+i1)*w.in[2]:][lo2:hi2]
							base := lo2*s2 + off2
							if s2 == 1 {
								d := dst[base : base+len(srow)]
								for i, v := range srow {
									d[i] += v
								}
								continue
							}
							for i, v := range srow {
								dst[base+i*s2] += v
							}
						}
					}
				}
			}
		}
	}
}
