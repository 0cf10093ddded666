package ge

import (
	"fmt"
	"math"

	"github.com/ascend-go/cann/internal/par"
	sg "github.com/ascend-go/cann/internal/sgemm"
)

// Pooling over 1 to 3 spatial dims of x [N, C, spatial...]: MaxPool (with
// dilations) and AvgPool (count_include_pad decides whether padding taps
// count in the divisor). Global pooling is a window the size of the input.
const (
	OpMaxPool OpType = 74
	OpAvgPool OpType = 75
)

func init() {
	attrs := map[string]AttrKind{AttrKernelShape: AttrInts, AttrStrides: AttrInts, AttrPads: AttrInts,
		AttrDilations: AttrInts, AttrCeilMode: AttrBool, AttrCountIncludePad: AttrBool}
	registerOp(OpMaxPool, &opSpec{name: "MaxPool", minIn: 1, maxIn: 1, attrs: attrs, infer: inferMaxPool, kernel: maxPoolKernel})
	registerOp(OpAvgPool, &opSpec{name: "AvgPool", minIn: 1, maxIn: 1, attrs: attrs, infer: inferPool, kernel: poolKernel})
}

// Pool applies OpMaxPool or OpAvgPool with the given kernel dims; set
// strides, pads, dilations, ceil mode and count_include_pad with WithAttr.
func (g *Graph) Pool(op OpType, x *Tensor, kernel []int64, opts ...OpOption) *Tensor {
	return g.single(op, []*Tensor{x}, Attrs{AttrKernelShape: IntsAttr(kernel)}, opts)
}

// inferMaxPool takes float64 and integer inputs to the nn family's
// generic pooling (kernel_nn_pool.go) and float32/16/bf16 here.
func inferMaxPool(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if !isFloat(in[0].DataType) {
		w, err := nnPoolWindow(OpMaxPool, in, a)
		if err != nil {
			return nil, err
		}
		x := in[0]
		return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: w.outShape(x.Dims[0], x.Dims[1])}}, nil
	}
	return inferPool(in, a)
}

func maxPoolKernel(t *Task, args [][]byte) error {
	if !isFloat(t.Inputs[0].DataType) {
		return nnPoolKernel(t, args)
	}
	return poolKernel(t, args)
}

func poolWindow(in []TensorDesc, a Attrs) (window, error) {
	if err := needFloat("input", in[0].DataType); err != nil {
		return window{}, err
	}
	k := a.Ints(AttrKernelShape)
	if k == nil {
		return window{}, fmt.Errorf("missing %q attribute", AttrKernelShape)
	}
	w, err := spatialWindow(in[0].Dims, k, a)
	if err != nil {
		return window{}, err
	}
	if err := w.outDims(a.Bool(AttrCeilMode)); err != nil {
		return window{}, err
	}
	return w, nil
}

func inferPool(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	w, err := poolWindow(in, a)
	if err != nil {
		return nil, err
	}
	x := in[0]
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: w.outShape(x.Dims[0], x.Dims[1])}}, nil
}

func poolKernel(t *Task, args [][]byte) error {
	var s scratch
	defer s.release()
	w, err := poolWindow(t.Inputs, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	xd, od := t.Inputs[0], t.Outputs[0]
	x := readFloats(&s, xd.DataType, args[0], prod(xd.Dims))
	out := outFloats(&s, od.DataType, args[1], prod(od.Dims))
	planes := int(xd.Dims[0] * xd.Dims[1])
	isMax, incl := t.Op == OpMaxPool, t.Attrs.Bool(AttrCountIncludePad)
	// Planes are independent: large poolings split them over threads.
	if th := par.Threads(planes*w.outSize()*w.k[0]*w.k[1]*w.k[2], parallelElems); th > 1 {
		wc := w // the goroutines' copy: w stays on the stack on the serial path
		par.Chunked(th, planes, func(lo, hi int) { poolPlanes(&wc, x, out, lo, hi, isMax, incl) })
	} else {
		poolPlanes(&w, x, out, 0, planes, isMax, incl)
	}
	storeFloats(od.DataType, args[1], out)
	return nil
}

// poolAll pools a whole plane (global pooling: one window covering the
// input, no padding): the max, or sgemm.Sum (vector partial sums in a
// fixed order) divided by the count.
func poolAll(x []float32, isMax bool) float32 {
	if isMax {
		acc := float32(math.Inf(-1))
		for _, v := range x {
			acc = max(acc, v)
		}
		return acc
	}
	return sg.Sum(x) / float32(len(x))
}

// maxPairs is MaxPool over a plane with windows of 1 or 2 rows by 1 or
// 2 columns that tile the input (stride = window, no padding, no
// dilation; a last row or column a window does not cover is dropped):
// each output the max of its taps in one expression, which the builtin
// max makes branch-free (NaN propagates, +0 wins over -0, so the order
// of the taps does not matter and the values are pool2D's); 2×2 windows
// through sgemm.MaxPairs, 16 outputs per AVX-512 step.
func maxPairs(w *window, xp, op []float32) {
	W, OW := w.in[2], w.out[2]
	kh, kw := w.k[1], w.k[2]
	for oy := range w.out[1] {
		r0 := xp[oy*kh*W:][:W]
		r1 := r0
		if kh == 2 {
			r1 = xp[(oy*2+1)*W:][:W]
		}
		o := op[oy*OW:][:OW]
		if kw == 1 {
			r0, r1 = r0[:len(o)], r1[:len(o)]
			for i := range o {
				o[i] = max(r0[i], r1[i])
			}
			continue
		}
		sg.MaxPairs(o, r0, r1)
	}
}

// poolSpan is one output index's window along one dim: the first and
// past-the-end input index inside the input (stepping by the dilation),
// the number of taps there, and the taps counted by count_include_pad
// (those inside the declared padding too; taps past it never count).
func poolSpan(w *window, d, o int) (first, end, cnt, padCnt int) {
	lo := o*w.s[d] - w.pb[d]
	hi := lo + w.effK(d)
	padEnd := min(hi, w.in[d]+w.pe[d])
	padCnt = (padEnd - lo + w.d[d] - 1) / w.d[d]
	first = lo
	if first < 0 {
		first += (-first + w.d[d] - 1) / w.d[d] * w.d[d]
	}
	end = min(hi, w.in[d])
	if end > first {
		cnt = (end - first + w.d[d] - 1) / w.d[d]
	}
	return first, end, cnt, padCnt
}

// pool3 computes one plane of max or average pooling in float32: each
// output's window is clipped to the input once per dim, so the tap loops
// test no bounds. Max propagates NaN; the average sums in float32 and
// divides by the taps inside the input, or by the taps inside the
// padding when incl (count_include_pad), NaN for a window of no taps.
func pool3(w *window, xp, op []float32, isMax, incl bool) {
	i := 0
	negInf := float32(math.Inf(-1))
	for o0 := range w.out[0] {
		f0, e0, c0, p0 := poolSpan(w, 0, o0)
		for o1 := range w.out[1] {
			f1, e1, c1, p1 := poolSpan(w, 1, o1)
			for o2 := range w.out[2] {
				f2, e2, c2, p2 := poolSpan(w, 2, o2)
				var acc float32
				if isMax {
					acc = negInf
				}
				if c0 > 0 && c1 > 0 && c2 > 0 {
					for i0 := f0; i0 < e0; i0 += w.d[0] {
						for i1 := f1; i1 < e1; i1 += w.d[1] {
							row := xp[(i0*w.in[1]+i1)*w.in[2]:]
							switch {
							case isMax && w.d[2] == 1:
								for _, v := range row[f2:e2] {
									acc = max(acc, v)
								}
							case isMax:
								for i2 := f2; i2 < e2; i2 += w.d[2] {
									acc = max(acc, row[i2])
								}
							case w.d[2] == 1:
								for _, v := range row[f2:e2] {
									acc += v
								}
							default:
								for i2 := f2; i2 < e2; i2 += w.d[2] {
									acc += row[i2]
								}
							}
						}
					}
				}
				switch cnt := c0 * c1 * c2; {
				case isMax:
				case incl:
					acc /= float32(p0 * p1 * p2)
				case cnt > 0:
					acc /= float32(cnt)
				default:
					acc = float32(math.NaN())
				}
				op[i] = acc
				i++
			}
		}
	}
}

// pool2D is pool3 for one or two spatial dims (a plane one deep), row by
// row: each input row of an output row's window is folded into the whole
// output row at once, the outputs whose window lies inside the row with a
// fixed tap count and no bounds tests (2 taps unrolled), the edge outputs
// through poolSpan. Taps are taken in the same order as pool3, so the
// results are the same bits.
func pool2D(w *window, xp, op []float32, isMax, incl bool) {
	W, OW := w.in[2], w.out[2]
	kw, s2, d2, pb2 := w.k[2], w.s[2], w.d[2], w.pb[2]
	a, _ := tapRange(OW, W, s2, -pb2)
	_, b := tapRange(OW, W, s2, (kw-1)*d2-pb2)
	b = max(a, b)
	negInf := float32(math.Inf(-1))
	for o1 := range w.out[1] {
		f1, e1, c1, p1 := poolSpan(w, 1, o1)
		orow := op[o1*OW : (o1+1)*OW]
		if isMax {
			for i := range orow {
				orow[i] = negInf
			}
		} else {
			clear(orow)
		}
		for i1 := f1; i1 < e1; i1 += w.d[1] {
			xrow := xp[i1*W : (i1+1)*W]
			poolEdge(w, xrow, orow, 0, min(a, OW), isMax)
			poolEdge(w, xrow, orow, b, OW, isMax)
			in := orow[a:b]
			switch {
			case isMax && kw == 2 && d2 == 1:
				for i := range in {
					base := (a+i)*s2 - pb2
					in[i] = max(in[i], xrow[base], xrow[base+1])
				}
			case isMax:
				for i := range in {
					base := (a+i)*s2 - pb2
					acc := in[i]
					for k := range kw {
						acc = max(acc, xrow[base+k*d2])
					}
					in[i] = acc
				}
			default:
				for i := range in {
					base := (a+i)*s2 - pb2
					acc := in[i]
					for k := range kw {
						acc += xrow[base+k*d2]
					}
					in[i] = acc
				}
			}
		}
		if isMax {
			continue
		}
		for o2 := range orow {
			_, _, c2, p2 := poolSpan(w, 2, o2)
			switch cnt := c1 * c2; {
			case incl:
				orow[o2] /= float32(p1 * p2)
			case cnt > 0:
				orow[o2] /= float32(cnt)
			default:
				orow[o2] = float32(math.NaN())
			}
		}
	}
}

// poolEdge folds one input row into outputs [lo, hi) of an output row,
// each over its own clipped window.
func poolEdge(w *window, xrow, orow []float32, lo, hi int, isMax bool) {
	for o2 := lo; o2 < hi; o2++ {
		f2, e2, _, _ := poolSpan(w, 2, o2)
		acc := orow[o2]
		for i2 := f2; i2 < e2; i2 += w.d[2] {
			v := xrow[i2]
			if !isMax {
				acc += v
			} else {
				acc = max(acc, v)
			}
		}
		orow[o2] = acc
	}
}

// poolPlanes pools planes [lo,hi) of x into out: a global window whole
// (poolAll), tiling windows of up to 2×2 by row pairs (maxPairs), the
// rest window by window.
func poolPlanes(w *window, x, out []float32, lo, hi int, isMax, incl bool) {
	pin, pout := w.inSize(), w.outSize()
	one, none := [maxSpatial]int{1, 1, 1}, [maxSpatial]int{}
	flat := w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1
	global := w.k == w.in && w.out == one && w.d == one && w.pb == none && w.pe == none
	pairs := isMax && flat && w.d == one && w.pb == none && w.pe == none &&
		w.k[1] <= 2 && w.k[2] <= 2 && w.s[1] == w.k[1] && w.s[2] == w.k[2]
	for p := lo; p < hi; p++ {
		switch {
		case global:
			out[p] = poolAll(x[p*pin:(p+1)*pin], isMax)
		case pairs:
			maxPairs(w, x[p*pin:(p+1)*pin], out[p*pout:(p+1)*pout])
		case flat:
			pool2D(w, x[p*pin:(p+1)*pin], out[p*pout:(p+1)*pout], isMax, incl)
		default:
			pool3(w, x[p*pin:(p+1)*pin], out[p*pout:(p+1)*pout], isMax, incl)
		}
	}
}
