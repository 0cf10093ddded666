package ge

import (
	"fmt"
	"math"
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

func poolWindow(in []TensorDesc, a Attrs) (*window, error) {
	if err := needFloat("input", in[0].DataType); err != nil {
		return nil, err
	}
	k := a.Ints(AttrKernelShape)
	if k == nil {
		return nil, fmt.Errorf("missing %q attribute", AttrKernelShape)
	}
	w, err := spatialWindow(in[0].Dims, k, a)
	if err != nil {
		return nil, err
	}
	if err := w.outDims(a.Bool(AttrCeilMode)); err != nil {
		return nil, err
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
	pin, pout := w.inSize(), w.outSize()
	isMax, incl := t.Op == OpMaxPool, t.Attrs.Bool(AttrCountIncludePad)
	for p := range planes {
		xp, op := x[p*pin:(p+1)*pin], out[p*pout:(p+1)*pout]
		i := 0
		for o0 := range w.out[0] {
			for o1 := range w.out[1] {
				for o2 := range w.out[2] {
					o := [3]int{o0, o1, o2}
					acc, cnt, padCnt := 0.0, 0, 1
					if isMax {
						acc = math.Inf(-1)
					}
					var lo, hi [3]int
					for d := range 3 {
						lo[d] = o[d]*w.s[d] - w.pb[d]
						// Taps that fall in the declared padding count
						// for count_include_pad; taps past it do not.
						end := min(lo[d]+w.effK(d), w.in[d]+w.pe[d])
						padCnt *= (end - lo[d] + w.d[d] - 1) / w.d[d]
						hi[d] = lo[d] + w.effK(d)
					}
					for i0 := lo[0]; i0 < hi[0]; i0 += w.d[0] {
						if i0 < 0 || i0 >= w.in[0] {
							continue
						}
						for i1 := lo[1]; i1 < hi[1]; i1 += w.d[1] {
							if i1 < 0 || i1 >= w.in[1] {
								continue
							}
							row := xp[(i0*w.in[1]+i1)*w.in[2]:]
							for i2 := lo[2]; i2 < hi[2]; i2 += w.d[2] {
								if i2 < 0 || i2 >= w.in[2] {
									continue
								}
								v := float64(row[i2])
								if isMax {
									if v > acc || v != v {
										acc = v
									}
								} else {
									acc += v
								}
								cnt++
							}
						}
					}
					switch {
					case isMax:
					case incl:
						acc /= float64(padCnt)
					case cnt > 0:
						acc /= float64(cnt)
					default:
						acc = math.NaN()
					}
					op[i] = float32(acc)
					i++
				}
			}
		}
	}
	storeFloats(od.DataType, args[1], out)
	return nil
}
