package ge

import (
	"fmt"

	"github.com/ascend-go/cann/acl"
)

// Element-placement index ops: GatherElements, GatherND, ScatterElements,
// ScatterND, OneHot, Tile, Trilu and ReverseSequence. Moves work on bytes
// (every storable type); the scatter reductions compute in float64 or
// int64 and round once per update, as numpy does in the tensor's type.
// Negative indices count from the end; an index still out of range fails
// the task after the elements before it were written.

func init() {
	registerOp(OpGatherElements, &opSpec{name: "GatherElements", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrAxis: AttrInt}, infer: inferGatherElements, kernel: gatherElementsKernel})
	registerOp(OpGatherND, &opSpec{name: "GatherND", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrBatchDims: AttrInt}, infer: inferGatherND, kernel: gatherNDKernel})
	registerOp(OpScatterElements, &opSpec{name: "ScatterElements", minIn: 3, maxIn: 3,
		attrs: map[string]AttrKind{AttrAxis: AttrInt, AttrReduction: AttrString}, infer: inferScatterElements, kernel: scatterElementsKernel})
	registerOp(OpScatterND, &opSpec{name: "ScatterND", minIn: 3, maxIn: 3,
		attrs: map[string]AttrKind{AttrReduction: AttrString}, infer: inferScatterND, kernel: scatterNDKernel})
	registerOp(OpOneHot, &opSpec{name: "OneHot", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrDepth: AttrInt, AttrAxis: AttrInt, AttrNegativeIndices: AttrBool}, infer: inferOneHot, kernel: oneHotKernel})
	registerOp(OpTile, &opSpec{name: "Tile", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrRepeats: AttrInts}, infer: inferTile, kernel: tileKernel})
	registerOp(OpTrilu, &opSpec{name: "Trilu", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrUpper: AttrBool, AttrK: AttrInt}, infer: inferTrilu, kernel: triluKernel})
	registerOp(OpReverseSequence, &opSpec{name: "ReverseSequence", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrBatchAxis: AttrInt, AttrTimeAxis: AttrInt}, infer: inferReverseSequence, kernel: reverseSequenceKernel})
}

// rowStrides returns the element strides of dense dims.
func rowStrides(dims []int64) []int {
	st := make([]int, len(dims))
	acc := 1
	for i := len(dims) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= int(dims[i])
	}
	return st
}

// next advances the multi-index idx over dims (row-major).
func next(idx []int, dims []int64) {
	for d := len(dims) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < int(dims[d]) {
			return
		}
		idx[d] = 0
	}
}

// wrapIndex maps an index in [-dim, dim) into [0, dim).
func wrapIndex(v, dim int64) (int64, bool) {
	if v < 0 {
		v += dim
	}
	return v, v >= 0 && v < dim
}

func inferGatherElements(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, id := in[0], in[1]
	if err := needIndexType("indices", id.DataType); err != nil {
		return nil, err
	}
	axis, err := normAxis(a.Int(AttrAxis, 0), len(x.Dims))
	if err != nil {
		return nil, err
	}
	if len(id.Dims) != len(x.Dims) {
		return nil, fmt.Errorf("indices %s and data %s differ in rank", dimsString(id.Dims), dimsString(x.Dims))
	}
	for d := range x.Dims {
		if d != axis && id.Dims[d] > x.Dims[d] {
			return nil, fmt.Errorf("indices %s exceed data %s in dim %d", dimsString(id.Dims), dimsString(x.Dims), d)
		}
	}
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: cloneDims(id.Dims)}}, nil
}

// gatherElementsKernel: out[idx] = data[idx with idx[axis] = indices[idx]].
func gatherElementsKernel(t *Task, args [][]byte) error {
	x, id := t.Inputs[0], t.Inputs[1]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, 0), len(x.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	es := x.DataType.Size()
	st := rowStrides(x.Dims)
	idx := make([]int, len(id.Dims))
	for i := range prod(id.Dims) {
		v, ok := wrapIndex(indexAt(id.DataType, args[1], i), x.Dims[axis])
		if !ok {
			return kernelError(t, "index %d at position %d out of range [%d, %d)", indexAt(id.DataType, args[1], i), i, -x.Dims[axis], x.Dims[axis])
		}
		off := 0
		for d, k := range idx {
			if d == axis {
				k = int(v)
			}
			off += k * st[d]
		}
		copy(args[2][i*es:(i+1)*es], args[0][off*es:])
		next(idx, id.Dims)
	}
	return nil
}

// ndGeometry checks GatherND/ScatterND operands: data dims x, indices dims
// id (last dim: the index tuple length k) and batch dims b. It returns k
// and the dims of one gathered slice.
func ndGeometry(x, id []int64, b int) (k int, slice []int64, err error) {
	q := len(id)
	if q < 1 || b < 0 || b >= q || b >= len(x) {
		return 0, nil, fmt.Errorf("batch_dims %d for indices %s and data %s", b, dimsString(id), dimsString(x))
	}
	for d := range b {
		if id[d] != x[d] {
			return 0, nil, fmt.Errorf("batch dim %d: indices %s and data %s differ", d, dimsString(id), dimsString(x))
		}
	}
	k = int(id[q-1])
	if k < 1 || b+k > len(x) {
		return 0, nil, fmt.Errorf("index tuples of length %d for data %s with batch_dims %d", k, dimsString(x), b)
	}
	return k, x[b+k:], nil
}

func inferGatherND(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, id := in[0], in[1]
	if err := needIndexType("indices", id.DataType); err != nil {
		return nil, err
	}
	_, slice, err := ndGeometry(x.Dims, id.Dims, int(a.Int(AttrBatchDims, 0)))
	if err != nil {
		return nil, err
	}
	dims := append(cloneDims(id.Dims[:len(id.Dims)-1]), slice...)
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: dims}}, nil
}

// ndOffsets resolves the index tuples of GatherND/ScatterND: for tuple j
// the element offset of its slice in data.
func ndOffsets(t *Task, x, id TensorDesc, ib []byte, b int) ([]int, int, error) {
	k, slice, err := ndGeometry(x.Dims, id.Dims, b)
	if err != nil {
		return nil, 0, kernelError(t, "%v", err)
	}
	st := rowStrides(x.Dims)
	nb := prod(id.Dims[:b])
	perBatch := prod(id.Dims[b : len(id.Dims)-1])
	batchSize := prod(x.Dims[b:])
	offs := make([]int, nb*perBatch)
	for j := range offs {
		off := (j / perBatch) * batchSize
		for c := range k {
			raw := indexAt(id.DataType, ib, j*k+c)
			v, ok := wrapIndex(raw, x.Dims[b+c])
			if !ok {
				return nil, 0, kernelError(t, "index %d of tuple %d out of range [%d, %d)", raw, j, -x.Dims[b+c], x.Dims[b+c])
			}
			off += int(v) * st[b+c]
		}
		offs[j] = off
	}
	return offs, prod(slice), nil
}

func gatherNDKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	offs, n, err := ndOffsets(t, x, t.Inputs[1], args[1], int(t.Attrs.Int(AttrBatchDims, 0)))
	if err != nil {
		return err
	}
	es := x.DataType.Size()
	for j, off := range offs {
		copy(args[2][j*n*es:(j+1)*n*es], args[0][off*es:])
	}
	return nil
}

// scatterReduction returns how an update combines with the element:
// nil replaces it.
func scatterReduction(a Attrs, dt acl.DataType) (string, error) {
	r := a.String(AttrReduction)
	switch r {
	case "", "none":
		return "", nil
	case "add", "mul", "max", "min":
		if !numeric(dt) {
			return "", &dtypeError{fmt.Sprintf("scatter reduction %q on %s", r, dt)}
		}
		return r, nil
	}
	return "", fmt.Errorf("reduction %q: want none, add, mul, max or min", r)
}

// scatterOne writes update element u (of upd) into element o of out with
// reduction r.
func scatterOne(out, upd []byte, dt acl.DataType, o, u int, r string) {
	es := dt.Size()
	if r == "" {
		copy(out[o*es:(o+1)*es], upd[u*es:])
		return
	}
	if isIntType(dt) {
		var a, b [1]int64
		readInts(a[:], dt, out[o*es:])
		readInts(b[:], dt, upd[u*es:])
		x, y := a[0], b[0]
		switch r {
		case "add":
			x += y
		case "mul":
			x *= y
		case "max":
			x = max(x, y)
		case "min":
			x = min(x, y)
		}
		writeInt(out, dt, o, x)
		return
	}
	var a, b [1]float64
	readF64(a[:], dt, out[o*es:])
	readF64(b[:], dt, upd[u*es:])
	x, y := a[0], b[0]
	switch r {
	case "add":
		x += y
	case "mul":
		x *= y
	case "max":
		x = max(x, y)
	case "min":
		x = min(x, y)
	}
	writeFloat(out, dt, o, x)
}

func inferScatterElements(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, id, up := in[0], in[1], in[2]
	if _, err := inferGatherElements(in[:2], a); err != nil {
		return nil, err
	}
	if up.DataType != x.DataType || !dimsEqual(up.Dims, id.Dims) {
		return nil, fmt.Errorf("updates %s must have data's type and indices' dims %s", up, dimsString(id.Dims))
	}
	if _, err := scatterReduction(a, x.DataType); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(x)}, nil
}

// scatterElementsKernel: out = data, then out[idx with idx[axis] =
// indices[idx]] (op)= updates[idx], in index order.
func scatterElementsKernel(t *Task, args [][]byte) error {
	x, id := t.Inputs[0], t.Inputs[1]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, 0), len(x.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	r, err := scatterReduction(t.Attrs, x.DataType)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	out := args[3][:x.Size()]
	copy(out, args[0])
	st := rowStrides(x.Dims)
	idx := make([]int, len(id.Dims))
	for i := range prod(id.Dims) {
		raw := indexAt(id.DataType, args[1], i)
		v, ok := wrapIndex(raw, x.Dims[axis])
		if !ok {
			return kernelError(t, "index %d at position %d out of range [%d, %d)", raw, i, -x.Dims[axis], x.Dims[axis])
		}
		off := 0
		for d, k := range idx {
			if d == axis {
				k = int(v)
			}
			off += k * st[d]
		}
		scatterOne(out, args[2], x.DataType, off, i, r)
		next(idx, id.Dims)
	}
	return nil
}

func inferScatterND(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, id, up := in[0], in[1], in[2]
	if err := needIndexType("indices", id.DataType); err != nil {
		return nil, err
	}
	_, slice, err := ndGeometry(x.Dims, id.Dims, 0)
	if err != nil {
		return nil, err
	}
	want := append(cloneDims(id.Dims[:len(id.Dims)-1]), slice...)
	if up.DataType != x.DataType || !dimsEqual(up.Dims, want) {
		return nil, fmt.Errorf("updates %s: want %s%s", up, shortType(x.DataType), dimsString(want))
	}
	if _, err := scatterReduction(a, x.DataType); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(x)}, nil
}

// scatterNDKernel: out = data, then each index tuple's slice (op)=
// its slice of updates, in tuple order.
func scatterNDKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	r, err := scatterReduction(t.Attrs, x.DataType)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	out := args[3][:x.Size()]
	copy(out, args[0])
	offs, n, err := ndOffsets(t, x, t.Inputs[1], args[1], 0)
	if err != nil {
		return err
	}
	for j, off := range offs {
		for e := range n {
			scatterOne(out, args[2], x.DataType, off+e, j*n+e, r)
		}
	}
	return nil
}

func inferOneHot(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	id, vals := in[0], in[1]
	if err := needValueType("indices", id.DataType); err != nil {
		return nil, err
	}
	if vals.NumElements() != 2 || len(vals.Dims) != 1 {
		return nil, fmt.Errorf("values %s: want [off_value, on_value]", vals)
	}
	depth := a.Int(AttrDepth, 0)
	if depth < 1 || depth > MaxDim {
		return nil, fmt.Errorf("depth %d out of range", depth)
	}
	axis, err := normAxis(a.Int(AttrAxis, -1), len(id.Dims)+1)
	if err != nil {
		return nil, err
	}
	dims := make([]int64, 0, len(id.Dims)+1)
	dims = append(append(append(dims, id.Dims[:axis]...), depth), id.Dims[axis:]...)
	return []TensorDesc{{DataType: vals.DataType, Format: id.Format, Dims: dims}}, nil
}

// oneHotKernel: on_value where the position along axis equals the index
// (with AttrNegativeIndices negative indices count from depth, as from
// ONNX opset 11), off_value elsewhere; an index outside the range gives a
// row of off_value, as ONNX specifies.
func oneHotKernel(t *Task, args [][]byte) error {
	id, vals, od := t.Inputs[0], t.Inputs[1], t.Outputs[0]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, -1), len(od.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	depth := int(od.Dims[axis])
	es := vals.DataType.Size()
	off, on := args[1][:es], args[1][es:2*es]
	out := args[2][:od.Size()]
	for i := 0; i < len(out); i += es {
		copy(out[i:], off)
	}
	// Indices may be any numeric type: floats truncate toward zero.
	n := prod(id.Dims)
	iv := make([]int64, n)
	if isIntType(id.DataType) {
		readInts(iv, id.DataType, args[0])
	} else {
		for i, f := range f64sOf(id.DataType, args[0], n) {
			iv[i] = floatToInt(f, acl.Int64)
		}
	}
	inner := prod(id.Dims[axis:])
	wrap := t.Attrs.Bool(AttrNegativeIndices)
	for i, v := range iv {
		if v < 0 && !wrap {
			continue
		}
		v, ok := wrapIndex(v, int64(depth))
		if !ok {
			continue
		}
		o, in := i/inner, i%inner
		p := (o*depth+int(v))*inner + in
		copy(out[p*es:(p+1)*es], on)
	}
	return nil
}

func inferTile(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	rep := a.Ints(AttrRepeats)
	if len(rep) != len(x.Dims) {
		return nil, fmt.Errorf("repeats %s for rank %d", dimsString(rep), len(x.Dims))
	}
	dims := cloneDims(x.Dims)
	for i, r := range rep {
		if r < 1 || r > MaxDim/dims[i] {
			return nil, fmt.Errorf("repeats %s: every repeat must be at least 1 (a 0 repeat is an empty tensor, not supported)", dimsString(rep))
		}
		dims[i] *= r
	}
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: dims}}, nil
}

// tileKernel: out[idx] = x[idx mod dims], a whole input row at a time.
func tileKernel(t *Task, args [][]byte) error {
	x, od := t.Inputs[0], t.Outputs[0]
	es := x.DataType.Size()
	r := len(x.Dims)
	if r == 0 {
		copy(args[1][:es], args[0])
		return nil
	}
	st := rowStrides(x.Dims)
	row := int(x.Dims[r-1]) * es
	idx := make([]int, r-1)
	dst := 0
	for range prod(od.Dims[:r-1]) {
		src := 0
		for d, k := range idx {
			src += (k % int(x.Dims[d])) * st[d]
		}
		for range od.Dims[r-1] / x.Dims[r-1] {
			copy(args[1][dst:dst+row], args[0][src*es:])
			dst += row
		}
		next(idx, od.Dims[:r-1])
	}
	return nil
}

func inferTrilu(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if len(in[0].Dims) < 2 {
		return nil, fmt.Errorf("input %s: Trilu needs rank 2 or more", in[0])
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// triluKernel keeps, in every trailing matrix, the elements with
// j - i >= k (upper) or j - i <= k (lower) and zeroes the rest.
func triluKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	r := len(x.Dims)
	es := x.DataType.Size()
	rows, cols := int(x.Dims[r-2]), int(x.Dims[r-1])
	k := t.Attrs.Int(AttrK, 0)
	upper := t.Attrs.Bool(AttrUpper)
	out := args[1][:x.Size()]
	copy(out, args[0])
	for m := range prod(x.Dims[:r-2]) {
		for i := range rows {
			for j := range cols {
				d := int64(j - i)
				if (upper && d < k) || (!upper && d > k) {
					p := ((m*rows+i)*cols + j) * es
					clear(out[p : p+es])
				}
			}
		}
	}
	return nil
}

func inferReverseSequence(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x, sl := in[0], in[1]
	if err := needIndexType("sequence_lens", sl.DataType); err != nil {
		return nil, err
	}
	b, tm := a.Int(AttrBatchAxis, 1), a.Int(AttrTimeAxis, 0)
	if len(x.Dims) < 2 || !(b == 0 && tm == 1 || b == 1 && tm == 0) {
		return nil, fmt.Errorf("batch_axis %d and time_axis %d for input %s: want 0 and 1 (in either order) of a tensor of rank 2 or more", b, tm, x)
	}
	if len(sl.Dims) != 1 || sl.Dims[0] != x.Dims[b] {
		return nil, fmt.Errorf("sequence_lens %s: want one length per batch entry (%d)", sl, x.Dims[b])
	}
	return []TensorDesc{cloneDesc(x)}, nil
}

// reverseSequenceKernel reverses the first sequence_lens[b] time steps of
// every batch entry b and copies the rest.
func reverseSequenceKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	b, tm := int(t.Attrs.Int(AttrBatchAxis, 1)), int(t.Attrs.Int(AttrTimeAxis, 0))
	es := x.DataType.Size()
	st := rowStrides(x.Dims)
	inner := prod(x.Dims[2:]) * es
	out := args[2][:x.Size()]
	for bi := range int(x.Dims[b]) {
		n := indexAt(t.Inputs[1].DataType, args[1], bi)
		if n < 0 || n > x.Dims[tm] {
			return kernelError(t, "sequence_lens[%d] = %d out of range [0, %d]", bi, n, x.Dims[tm])
		}
		for ti := range int(x.Dims[tm]) {
			src := ti
			if ti < int(n) {
				src = int(n) - 1 - ti
			}
			d := (bi*st[b] + ti*st[tm]) * es
			s := (bi*st[b] + src*st[tm]) * es
			copy(out[d:d+inner], args[0][s:s+inner])
		}
	}
	return nil
}
