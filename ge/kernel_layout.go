package ge

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/ascend-go/cann/internal/par"
)

// Data-layout ops on bytes (every storable type): Transpose, StridedSlice
// (ONNX Slice: negative indices, clamping, any non-zero step), Expand
// (numpy broadcast to a shape) and Pad (constant, edge, reflect or wrap;
// negative pads crop).
const (
	OpTranspose    OpType = 85
	OpStridedSlice OpType = 86
	OpExpand       OpType = 87
	OpPad          OpType = 88
)

// Attributes of the layout ops.
const (
	AttrPerm   = "perm"   // Transpose: ints, a permutation of the dims
	AttrStarts = "starts" // StridedSlice: ints, one per dim
	AttrEnds   = "ends"   // StridedSlice: ints, one per dim (exclusive)
	AttrSteps  = "steps"  // StridedSlice: ints, one per dim, non-zero
	AttrValue  = "value"  // Pad: float fill value
	AttrMode   = "mode"   // Pad: string, "constant" (default), "edge", "reflect" or "wrap"
)

func init() {
	registerOp(OpTranspose, &opSpec{name: "Transpose", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrPerm: AttrInts}, infer: inferTranspose, kernel: transposeKernel})
	registerOp(OpStridedSlice, &opSpec{name: "StridedSlice", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrStarts: AttrInts, AttrEnds: AttrInts, AttrSteps: AttrInts},
		infer: inferStridedSlice, kernel: stridedSliceKernel})
	registerOp(OpExpand, &opSpec{name: "Expand", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrShape: AttrInts}, infer: inferExpand, kernel: expandKernel})
	registerOp(OpPad, &opSpec{name: "Pad", minIn: 1, maxIn: 2,
		attrs: map[string]AttrKind{AttrPads: AttrInts, AttrValue: AttrFloat, AttrMode: AttrString}, infer: inferPad, kernel: padKernel})
}

// Transpose permutes x's dims: output dim i is input dim perm[i] (nil
// perm reverses the dims).
func (g *Graph) Transpose(x *Tensor, perm []int64, opts ...OpOption) *Tensor {
	a := Attrs{}
	if perm != nil {
		a[AttrPerm] = IntsAttr(perm)
	}
	return g.single(OpTranspose, []*Tensor{x}, a, opts)
}

// StridedSlice takes x[starts[i]:ends[i]:steps[i]] in every dim with
// numpy/ONNX rules: negative positions count from the end and positions
// are clamped to the dim. The result must not be empty.
func (g *Graph) StridedSlice(x *Tensor, starts, ends, steps []int64, opts ...OpOption) *Tensor {
	return g.single(OpStridedSlice, []*Tensor{x}, Attrs{AttrStarts: IntsAttr(starts), AttrEnds: IntsAttr(ends), AttrSteps: IntsAttr(steps)}, opts)
}

// Expand broadcasts x and shape together (numpy rules) and returns x
// repeated to the result.
func (g *Graph) Expand(x *Tensor, shape []int64, opts ...OpOption) *Tensor {
	return g.single(OpExpand, []*Tensor{x}, Attrs{AttrShape: IntsAttr(shape)}, opts)
}

// Pad adds pads[i] elements before and pads[rank+i] after dim i, filled
// with value (converted to x's type).
func (g *Graph) Pad(x *Tensor, pads []int64, value float64, opts ...OpOption) *Tensor {
	return g.single(OpPad, []*Tensor{x}, Attrs{AttrPads: IntsAttr(pads), AttrValue: FloatAttr(value)}, opts)
}

func transposePerm(r int, a Attrs) ([]int, error) {
	p := a.Ints(AttrPerm)
	perm := make([]int, r)
	if p == nil {
		for i := range perm {
			perm[i] = r - 1 - i
		}
		return perm, nil
	}
	if len(p) != r {
		return nil, fmt.Errorf("perm %s has %d entries, input has rank %d", dimsString(p), len(p), r)
	}
	seen := make([]bool, r)
	for i, v := range p {
		if v < 0 || v >= int64(r) || seen[v] {
			return nil, fmt.Errorf("perm %s is not a permutation of [0, %d)", dimsString(p), r)
		}
		seen[v] = true
		perm[i] = int(v)
	}
	return perm, nil
}

func inferTranspose(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	perm, err := transposePerm(len(in[0].Dims), a)
	if err != nil {
		return nil, err
	}
	dims := make([]int64, len(perm))
	for i, p := range perm {
		dims[i] = in[0].Dims[p]
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

func transposeKernel(t *Task, args [][]byte) error {
	d := t.Inputs[0]
	r := len(d.Dims)
	var permv, inStv, stv [maxStackRank]int
	var perm []int
	if r <= maxStackRank && validPerm(r, t.Attrs) {
		perm = permv[:r]
		if p := t.Attrs.Ints(AttrPerm); p != nil {
			for i, v := range p {
				perm[i] = int(v)
			}
		} else {
			for i := range perm {
				perm[i] = r - 1 - i
			}
		}
	} else {
		var err error
		if perm, err = transposePerm(r, t.Attrs); err != nil {
			return kernelError(t, "%v", err)
		}
	}
	es := d.DataType.Size()
	inSt, st := inStv[:0], stv[:0]
	if r > maxStackRank {
		inSt, st = make([]int, 0, r), make([]int, 0, r)
	}
	inSt, st = inSt[:r], st[:r]
	acc := 1
	for i := r - 1; i >= 0; i-- {
		inSt[i] = acc
		acc *= int(d.Dims[i])
	}
	// Walk the output in order; src offset advances by the permuted stride.
	od := t.Outputs[0].Dims
	for i, p := range perm {
		st[i] = inSt[p]
	}
	gather(args[0], args[1], es, od, st, 0)
	return nil
}

// maxStackRank is the rank up to which the layout kernels keep their
// index arithmetic in stack arrays.
const maxStackRank = 8

// validPerm reports whether the perm attribute is absent or a
// permutation of [0, r) (transposePerm says what is wrong otherwise).
func validPerm(r int, a Attrs) bool {
	p := a.Ints(AttrPerm)
	if p == nil {
		return true
	}
	if len(p) != r {
		return false
	}
	var seen [maxStackRank]bool
	for _, v := range p {
		if v < 0 || v >= int64(r) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// gather writes the dense tensor of dims od whose element at index idx is
// src's element at base + Σ idx[i]·st[i] (element strides). A strided
// innermost dim of 4- or 8-byte elements (a transpose's usual case) is
// copied by typed loads and stores, not a copy call per element.
func gather(src, dst []byte, es int, od []int64, st []int, base int) {
	r := len(od)
	if r == 0 {
		copy(dst[:es], src[base*es:])
		return
	}
	n := prod(od)
	if n == 0 {
		return
	}
	rows := n / int(od[r-1])
	// Rows are independent: a large copy splits them over threads.
	if th := par.Threads(n, parallelElems); th > 1 && rows > 1 {
		// The goroutines' copies: the caller's dims and strides (stack
		// arrays) stay on its stack on the serial path.
		odc, stc := slices.Clone(od), slices.Clone(st)
		par.Chunked(th, rows, func(lo, hi int) { gatherRows(src, dst, es, odc, stc, base, lo, hi) })
		return
	}
	gatherRows(src, dst, es, od, st, base, 0, rows)
}

// gatherRows is gather for output rows (runs along the last dim) [r0,r1).
func gatherRows(src, dst []byte, es int, od []int64, st []int, base, r0, r1 int) {
	r := len(od)
	var idxv [maxStackRank]int
	idx := idxv[:0]
	if r > maxStackRank {
		idx = make([]int, 0, r)
	}
	idx = idx[:r]
	// The source offset of row r0: its index in each outer dim times
	// that dim's stride.
	off := base
	for i, q := r-2, r0; i >= 0; i-- {
		idx[i] = q % int(od[i])
		q /= int(od[i])
		off += idx[i] * st[i]
	}
	last, ls := int(od[r-1]), st[r-1]
	s32, d32 := viewU32(src, es), viewU32(dst, es)
	s64, d64 := viewU64(src, es), viewU64(dst, es)
	for o := r0 * last; o < r1*last; o += last {
		switch {
		case ls == 1:
			copy(dst[o*es:(o+last)*es], src[off*es:])
		case s32 != nil && d32 != nil:
			d := d32[o : o+last]
			for j := range d {
				d[j] = s32[off+j*ls]
			}
		case s64 != nil && d64 != nil:
			d := d64[o : o+last]
			for j := range d {
				d[j] = s64[off+j*ls]
			}
		default:
			for j := range last {
				copy(dst[(o+j)*es:(o+j+1)*es], src[(off+j*ls)*es:])
			}
		}
		for i := r - 2; i >= 0; i-- {
			idx[i]++
			off += st[i]
			if idx[i] < int(od[i]) {
				break
			}
			off -= st[i] * idx[i]
			idx[i] = 0
		}
	}
}

// viewU32 is b as 4-byte elements in place when es is 4 and b is aligned,
// else nil; viewU64 likewise for 8.
func viewU32(b []byte, es int) []uint32 {
	if es != 4 || len(b) < 4 || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func viewU64(b []byte, es int) []uint64 {
	if es != 8 || len(b) < 8 || uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// sliceGeometry resolves ONNX slice positions: the first element and the
// count of every dim.
func sliceGeometry(dims []int64, a Attrs) (start, count, step []int64, err error) {
	s, e, st := a.Ints(AttrStarts), a.Ints(AttrEnds), a.Ints(AttrSteps)
	r := len(dims)
	if len(s) != r || len(e) != r || len(st) != r {
		return nil, nil, nil, fmt.Errorf("starts %s, ends %s and steps %s must have rank %d", dimsString(s), dimsString(e), dimsString(st), r)
	}
	start, count, step = make([]int64, r), make([]int64, r), cloneDims(st)
	for i, d := range dims {
		b, en, k := s[i], e[i], st[i]
		if k == 0 || k < -MaxDim || k > MaxDim {
			return nil, nil, nil, fmt.Errorf("step %d of dim %d out of range", k, i)
		}
		b, en = max(min(b, MaxDim), -MaxDim), max(min(en, MaxDim), -MaxDim)
		if b < 0 {
			b += d
		}
		if en < 0 {
			en += d
		}
		if k > 0 {
			b, en = min(max(b, 0), d), min(max(en, 0), d)
			count[i] = max(0, (en-b+k-1)/k)
		} else {
			b, en = min(max(b, 0), d-1), min(max(en, -1), d-1)
			count[i] = max(0, (b-en+(-k)-1)/(-k))
		}
		start[i] = b // a zero count is an empty result, which only a host evaluation takes
	}
	return start, count, step, nil
}

func inferStridedSlice(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	_, count, _, err := sliceGeometry(in[0].Dims, a)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: count}}, nil
}

func stridedSliceKernel(t *Task, args [][]byte) error {
	d := t.Inputs[0]
	start, count, step, err := sliceGeometry(d.Dims, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	r := len(d.Dims)
	st := make([]int, r)
	base, acc := 0, 1
	for i := r - 1; i >= 0; i-- {
		st[i] = acc * int(step[i])
		base += acc * int(start[i])
		acc *= int(d.Dims[i])
	}
	gather(args[0], args[1], d.DataType.Size(), count, st, base)
	return nil
}

func inferExpand(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	shape := a.Ints(AttrShape)
	if len(shape) > MaxRank {
		return nil, fmt.Errorf("shape %s: rank exceeds %d", dimsString(shape), MaxRank)
	}
	dims, err := broadcastDims(in[0].Dims, shape)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

func expandKernel(t *Task, args [][]byte) error {
	d, od := t.Inputs[0], t.Outputs[0]
	st := broadcastStrides(d.Dims, od.Dims)
	gather(args[0], args[1], d.DataType.Size(), od.Dims, st, 0)
	return nil
}

func inferPad(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0].Dims
	p := a.Ints(AttrPads)
	if len(p) != 2*len(x) {
		return nil, fmt.Errorf("pads %s: want %d values", dimsString(p), 2*len(x))
	}
	mode := a.String(AttrMode)
	switch mode {
	case "", "constant":
		if !castable(in[0].DataType) {
			return nil, &dtypeError{fmt.Sprintf("cannot pad %s", in[0].DataType)}
		}
	case "edge", "reflect", "wrap":
		if len(in) > 1 {
			return nil, fmt.Errorf("mode %q takes no fill value input", mode)
		}
	default:
		return nil, fmt.Errorf("mode %q: want constant, edge, reflect or wrap", mode)
	}
	if len(in) > 1 && (in[1].DataType != in[0].DataType || in[1].NumElements() != 1) {
		return nil, fmt.Errorf("fill value %s: want one %s element", in[1], in[0].DataType)
	}
	dims := cloneDims(x)
	for i := range x {
		if p[i] < -MaxDim || p[len(x)+i] < -MaxDim || p[i] > MaxDim || p[len(x)+i] > MaxDim {
			return nil, fmt.Errorf("pads %s out of range", dimsString(p))
		}
		dims[i] += p[i] + p[len(x)+i]
		if dims[i] < 1 {
			return nil, fmt.Errorf("pads %s crop dim %d of %s to nothing (empty tensors are not supported)", dimsString(p), i, dimsString(x))
		}
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: dims}}, nil
}

// padSource maps output position i of a dim padded by before to the input
// position it copies, or -1 for the fill value.
func padSource(i, before, d int, mode string) int {
	s := i - before
	if s >= 0 && s < d {
		return s
	}
	switch mode {
	case "edge":
		return min(max(s, 0), d-1)
	case "wrap":
		return ((s % d) + d) % d
	case "reflect":
		if d == 1 {
			return 0
		}
		period := 2 * (d - 1)
		m := ((s % period) + period) % period
		if m >= d {
			m = period - m
		}
		return m
	}
	return -1
}

// padKernel writes every output element from its source element (per dim
// through padSource) or the fill value: the value attribute, or input 1.
func padKernel(t *Task, args [][]byte) error {
	d, od := t.Inputs[0], t.Outputs[0]
	dt := d.DataType
	es := dt.Size()
	p := t.Attrs.Ints(AttrPads)
	mode := t.Attrs.String(AttrMode)
	out := args[len(t.Inputs)][:od.Size()]
	var fillv [16]byte
	fill := fillv[:0]
	if es > len(fillv) {
		fill = make([]byte, 0, es)
	}
	fill = fill[:es]
	if len(t.Inputs) > 1 {
		copy(fill, args[1][:es])
	} else if v := t.Attrs.Float(AttrValue, 0); isIntType(dt) {
		writeInt(fill, dt, 0, int64(v))
	} else {
		writeFloat(fill, dt, 0, v)
	}
	r := len(d.Dims)
	if r == 0 {
		copy(out, args[0][:es])
		return nil
	}
	// Source position of every output position, per dim (pooled scratch
	// and stack arrays: nothing on the heap for ranks up to maxStackRank).
	var ar wordArena
	defer ar.release()
	var srcv [maxStackRank][]int
	var stv, idxv [maxStackRank]int
	src, st, idx := srcv[:0], stv[:0], idxv[:0]
	if r > maxStackRank {
		src, st, idx = make([][]int, 0, r), make([]int, 0, r), make([]int, 0, r)
	}
	src, st, idx = src[:r], st[:r], idx[:r-1]
	for k := range r {
		src[k] = ar.ints(int(od.Dims[k]))
		for i := range src[k] {
			src[k][i] = padSource(i, int(p[k]), int(d.Dims[k]), mode)
		}
	}
	acc := 1
	for i := r - 1; i >= 0; i-- {
		st[i] = acc
		acc *= int(d.Dims[i])
	}
	last := int(od.Dims[r-1])
	for o := 0; o < len(out); o += last * es {
		base := 0
		for k, i := range idx {
			s := src[k][i]
			if s < 0 {
				base = -1
				break
			}
			base += s * st[k]
		}
		for j := range last {
			dst := out[o+j*es : o+(j+1)*es]
			if s := src[r-1][j]; base < 0 || s < 0 {
				copy(dst, fill)
			} else {
				copy(dst, args[0][(base+s)*es:])
			}
		}
		next(idx, od.Dims[:r-1])
	}
	return nil
}
