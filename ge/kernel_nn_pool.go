package ge

import (
	"fmt"
	"math"

	"github.com/ascend-go/cann/acl"
)

// Pooling ops of the nn family over 1 to 3 spatial dims, on the geometry
// of MaxPool and AvgPool (kernel_shape, strides, pads, dilations,
// ceil_mode): MaxPoolWithIndices (MaxPool's second output: the flat
// index of each maximum, row-major or, with storage_order, column-major
// in the spatial dims), LpPool ((Σ|x|^p)^(1/p) over the window, padding
// counting as zero) and MaxUnpool (scatter pooled values back by their
// indices). They compute in float64 and take every integer type the
// comparisons need (MaxPool on int8/uint8 runs here too).
const (
	OpMaxUnpool          OpType = 405
	OpLpPool             OpType = 406
	OpMaxPoolWithIndices OpType = 414
)

// Attributes of the nn pooling ops.
const (
	AttrStorageOrder = "storage_order" // MaxPoolWithIndices: int, 1 = column-major indices
	AttrP            = "p"             // LpPool, LpNorm: int norm order
	AttrOutputShape  = "output_shape"  // MaxUnpool: ints, the full output dims
	AttrIndexShape   = "index_shape"   // MaxUnpool: ints, the dims the indices are flat in (default output_shape)
)

func init() {
	attrs := map[string]AttrKind{AttrKernelShape: AttrInts, AttrStrides: AttrInts, AttrPads: AttrInts,
		AttrDilations: AttrInts, AttrCeilMode: AttrBool, AttrStorageOrder: AttrInt}
	registerOp(OpMaxPoolWithIndices, &opSpec{name: "MaxPoolWithIndices", minIn: 1, maxIn: 1, attrs: attrs,
		infer: inferMaxPoolIdx, kernel: nnPoolKernel})
	lp := map[string]AttrKind{AttrKernelShape: AttrInts, AttrStrides: AttrInts, AttrPads: AttrInts,
		AttrDilations: AttrInts, AttrCeilMode: AttrBool, AttrP: AttrInt}
	registerOp(OpLpPool, &opSpec{name: "LpPool", minIn: 1, maxIn: 1, attrs: lp, infer: inferLpPool, kernel: nnPoolKernel})
	registerOp(OpMaxUnpool, &opSpec{name: "MaxUnpool", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrOutputShape: AttrInts, AttrIndexShape: AttrInts}, infer: inferMaxUnpool, kernel: maxUnpoolKernel})
}

// maxPoolable lists the types MaxPool compares.
func maxPoolable(t acl.DataType) bool {
	return isFloatOr64(t) || t == acl.Int8 || t == acl.Uint8 || t == acl.Int16 || t == acl.Int32 || t == acl.Int64
}

// nnPoolWindow checks the input type and reads the window.
func nnPoolWindow(op OpType, in []TensorDesc, a Attrs) (window, error) {
	dt := in[0].DataType
	if op == OpLpPool {
		if err := needFloatOr64("input", dt); err != nil {
			return window{}, err
		}
		if p := a.Int(AttrP, 2); p < 1 {
			return window{}, fmt.Errorf("p %d must be positive", p)
		}
	} else if !maxPoolable(dt) {
		return window{}, &dtypeError{fmt.Sprintf("cannot max-pool %s", dt)}
	}
	if so := a.Int(AttrStorageOrder, 0); so != 0 && so != 1 {
		return window{}, fmt.Errorf("storage_order %d: want 0 or 1", so)
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

func inferMaxPoolIdx(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	w, err := nnPoolWindow(OpMaxPoolWithIndices, in, a)
	if err != nil {
		return nil, err
	}
	x := in[0]
	dims := w.outShape(x.Dims[0], x.Dims[1])
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: dims},
		{DataType: acl.Int64, Format: acl.FormatND, Dims: cloneDims(dims)}}, nil
}

func inferLpPool(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	w, err := nnPoolWindow(OpLpPool, in, a)
	if err != nil {
		return nil, err
	}
	x := in[0]
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: w.outShape(x.Dims[0], x.Dims[1])}}, nil
}

// MaxPoolWithIndices is MaxPool that also returns the flat input index of
// each maximum (int64).
func (g *Graph) MaxPoolWithIndices(x *Tensor, kernel []int64, opts ...OpOption) (y, indices *Tensor) {
	n := g.AddOp(OpMaxPoolWithIndices, []*Tensor{x}, Attrs{AttrKernelShape: IntsAttr(kernel)}, opts...)
	return n.Output(0), n.Output(1)
}

// LpPool pools x with the p-norm over kernel windows.
func (g *Graph) LpPool(x *Tensor, kernel []int64, p int64, opts ...OpOption) *Tensor {
	return g.single(OpLpPool, []*Tensor{x}, Attrs{AttrKernelShape: IntsAttr(kernel), AttrP: IntAttr(p)}, opts)
}

// nnPoolKernel runs MaxPoolWithIndices, LpPool and MaxPool on integer
// types: each output scans its window's taps inside the input (padding
// taps are skipped: they never win a max and add zero to a norm).
func nnPoolKernel(t *Task, args [][]byte) error {
	w, err := nnPoolWindow(t.Op, t.Inputs, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	xd, od := t.Inputs[0], t.Outputs[0]
	x := readNums(xd.DataType, args[0], prod(xd.Dims))
	out := make([]float64, prod(od.Dims))
	var idx []int64
	if t.Op == OpMaxPoolWithIndices {
		idx = make([]int64, len(out))
	}
	p := float64(t.Attrs.Int(AttrP, 2))
	colMajor := t.Attrs.Int(AttrStorageOrder, 0) == 1
	planes := int(xd.Dims[0] * xd.Dims[1])
	pin, pout := w.inSize(), w.outSize()
	for pl := range planes {
		xp := x[pl*pin : (pl+1)*pin]
		i := pl * pout
		for o0 := range w.out[0] {
			for o1 := range w.out[1] {
				for o2 := range w.out[2] {
					o := [3]int{o0, o1, o2}
					var lo [3]int
					for d := range 3 {
						lo[d] = o[d]*w.s[d] - w.pb[d]
					}
					best, bi, sum := math.Inf(-1), -1, 0.0
					for k0 := range w.k[0] {
						i0 := lo[0] + k0*w.d[0]
						if i0 < 0 || i0 >= w.in[0] {
							continue
						}
						for k1 := range w.k[1] {
							i1 := lo[1] + k1*w.d[1]
							if i1 < 0 || i1 >= w.in[1] {
								continue
							}
							for k2 := range w.k[2] {
								i2 := lo[2] + k2*w.d[2]
								if i2 < 0 || i2 >= w.in[2] {
									continue
								}
								off := (i0*w.in[1]+i1)*w.in[2] + i2
								v := xp[off]
								if t.Op == OpLpPool {
									sum += math.Pow(math.Abs(v), p)
									continue
								}
								if bi < 0 || v > best || (v != v && best == best) {
									best, bi = v, off
									if colMajor {
										bi = (i2*w.in[1]+i1)*w.in[0] + i0
									}
								}
							}
						}
					}
					if t.Op == OpLpPool {
						out[i] = math.Pow(sum, 1/p)
					} else {
						out[i] = best
						if idx != nil {
							idx[i] = int64(pl*pin + max(bi, 0))
						}
					}
					i++
				}
			}
		}
	}
	writeFromF64(args[1], od.DataType, out)
	if idx != nil {
		writeFromInts(args[2], acl.Int64, idx)
	}
	return nil
}

// MaxUnpool scatters x into zeros of the given output dims at the flat
// indices (as MaxPoolWithIndices returns them, row-major).
func (g *Graph) MaxUnpool(x, indices *Tensor, outputShape []int64, opts ...OpOption) *Tensor {
	return g.single(OpMaxUnpool, []*Tensor{x, indices}, Attrs{AttrOutputShape: IntsAttr(outputShape)}, opts)
}

func inferMaxUnpool(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, ix := in[0], in[1]
	if !storable(x.DataType) {
		return nil, &dtypeError{fmt.Sprintf("cannot unpool %s", x.DataType)}
	}
	if ix.DataType != acl.Int64 && ix.DataType != acl.Int32 {
		return nil, &dtypeError{fmt.Sprintf("indices have data type %s, want int64 or int32", ix.DataType)}
	}
	if !dimsEqual(x.Dims, ix.Dims) {
		return nil, fmt.Errorf("indices %s and input %s differ", dimsString(ix.Dims), dimsString(x.Dims))
	}
	os := a.Ints(AttrOutputShape)
	if len(os) != len(x.Dims) || len(os) < 3 || os[0] != x.Dims[0] || os[1] != x.Dims[1] {
		return nil, fmt.Errorf("output_shape %s must be [%d, %d, spatial...] for input %s", dimsString(os), x.Dims[0], x.Dims[min(1, len(x.Dims)-1)], dimsString(x.Dims))
	}
	if is := a.Ints(AttrIndexShape); is != nil && len(is) != len(os) {
		return nil, fmt.Errorf("index_shape %s must have rank %d", dimsString(is), len(os))
	}
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: cloneDims(os)}}, nil
}

func maxUnpoolKernel(t *Task, args [][]byte) error {
	xd, id, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	n := prod(xd.Dims)
	idx := make([]int64, n)
	readInts(idx, id.DataType, args[1])
	es := xd.DataType.Size()
	out := args[2][:od.Size()]
	clear(out)
	is := t.Attrs.Ints(AttrIndexShape)
	if is == nil {
		is = od.Dims
	}
	total := int64(1)
	for _, d := range is {
		total *= d
	}
	for i, j := range idx {
		if j < 0 || j >= total {
			return kernelError(t, "index %d at %d is out of range [0, %d)", j, i, total)
		}
		// The index is flat in index_shape; place it at the same
		// position of the output's dims.
		o, stride := int64(0), int64(1)
		for d := len(is) - 1; d >= 0; d-- {
			p := j % is[d]
			j /= is[d]
			if p >= od.Dims[d] {
				return kernelError(t, "index %d at %d falls outside the output %s", idx[i], i, dimsString(od.Dims))
			}
			o += p * stride
			stride *= od.Dims[d]
		}
		copy(out[o*int64(es):(o+1)*int64(es)], args[0][i*es:(i+1)*es])
	}
	return nil
}
