package ge

import (
	stdcmp "cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/ascend-go/cann/acl"
)

// Index ops: ops that select, count or place elements by position or by
// value order (ArgMax, TopK, Unique, GatherND, ScatterElements, ...), and
// the small linear-algebra ops of the same family (Det, Einsum). Values
// are compared exactly: float types widened to float64, integer types and
// bool to int64.
const (
	OpArgMax          OpType = 300
	OpArgMin          OpType = 301
	OpHardmax         OpType = 302
	OpTopK            OpType = 303
	OpCumSum          OpType = 304
	OpNonZero         OpType = 305
	OpUnique          OpType = 306
	OpGatherElements  OpType = 310
	OpGatherND        OpType = 311
	OpScatterElements OpType = 312
	OpScatterND       OpType = 313
	OpOneHot          OpType = 314
	OpTile            OpType = 315
	OpTrilu           OpType = 316
	OpReverseSequence OpType = 317
	OpDet             OpType = 320
	OpEinsum          OpType = 321
)

// Attributes of the index ops (AttrAxis, AttrKeepDims and AttrReduction
// are shared with other ops).
const (
	AttrSelectLastIndex = "select_last_index" // ArgMax, ArgMin: bool, ties pick the last index
	AttrK               = "k"                 // TopK: int, elements kept; Trilu: int, diagonal offset
	AttrLargest         = "largest"           // TopK: bool, keep the largest (else the smallest)
	AttrSorted          = "sorted"            // TopK, Unique: bool
	AttrExclusive       = "exclusive"         // CumSum: bool, exclude the element itself
	AttrReverse         = "reverse"           // CumSum: bool, sum from the end
	AttrCount           = "count"             // NonZero, Unique: int, the value-dependent output count
	AttrBatchDims       = "batch_dims"        // GatherND: int
	AttrDepth           = "depth"             // OneHot: int
	AttrRepeats         = "repeats"           // Tile: ints, one per dim
	AttrUpper           = "upper"             // Trilu: bool, keep the upper triangle
	AttrBatchAxis       = "batch_axis"        // ReverseSequence: int (0 or 1)
	AttrTimeAxis        = "time_axis"         // ReverseSequence: int (1 or 0)
	AttrEquation        = "equation"          // Einsum: string
)

func init() {
	argAttrs := map[string]AttrKind{AttrAxis: AttrInt, AttrKeepDims: AttrBool, AttrSelectLastIndex: AttrBool}
	registerOp(OpArgMax, &opSpec{name: "ArgMax", minIn: 1, maxIn: 1, attrs: argAttrs, infer: inferArg, kernel: argKernel})
	registerOp(OpArgMin, &opSpec{name: "ArgMin", minIn: 1, maxIn: 1, attrs: argAttrs, infer: inferArg, kernel: argKernel})
	registerOp(OpHardmax, &opSpec{name: "Hardmax", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAxis: AttrInt}, infer: inferHardmax, kernel: hardmaxKernel})
	registerOp(OpTopK, &opSpec{name: "TopK", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrK: AttrInt, AttrAxis: AttrInt, AttrLargest: AttrBool, AttrSorted: AttrBool},
		infer: inferTopK, kernel: topKKernel})
	registerOp(OpCumSum, &opSpec{name: "CumSum", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAxis: AttrInt, AttrExclusive: AttrBool, AttrReverse: AttrBool},
		infer: inferCumSum, kernel: cumSumKernel})
	registerOp(OpNonZero, &opSpec{name: "NonZero", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrCount: AttrInt}, infer: inferNonZero, kernel: nonZeroKernel})
	registerOp(OpUnique, &opSpec{name: "Unique", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrCount: AttrInt, AttrAxis: AttrInt, AttrSorted: AttrBool},
		infer: inferUnique, kernel: uniqueKernel})
}

// numeric reports whether the index ops can compare and compute on values
// of type t.
func numeric(t acl.DataType) bool {
	switch t {
	case acl.Float32, acl.Float16, acl.BFloat16, acl.Float64,
		acl.Int8, acl.Uint8, acl.Int16, acl.Int32, acl.Int64, acl.Bool:
		return true
	}
	return false
}

func needValueType(what string, t acl.DataType) error {
	if !numeric(t) {
		return &dtypeError{fmt.Sprintf("%s has data type %s; want a float, integer or bool type", what, t)}
	}
	return nil
}

func needIndexType(what string, t acl.DataType) error {
	if t != acl.Int32 && t != acl.Int64 {
		return &dtypeError{fmt.Sprintf("%s has data type %s; want int32 or int64", what, t)}
	}
	return nil
}

// numVals holds a tensor's values widened for exact comparison: float
// types as float64, integer types and bool as int64.
type numVals struct {
	f []float64
	i []int64
}

func loadNums(dt acl.DataType, b []byte, n int) numVals {
	if isIntType(dt) {
		return numVals{i: intsOf(dt, b, n)}
	}
	return numVals{f: f64sOf(dt, b, n)}
}

// cmp orders element a against element b. NaN sorts above every number
// and equal to NaN, numpy's sort order (so ArgMax picks a NaN).
func (v numVals) cmp(a, b int) int {
	if v.f == nil {
		return stdcmp.Compare(v.i[a], v.i[b])
	}
	x, y := v.f[a], v.f[b]
	switch xn, yn := math.IsNaN(x), math.IsNaN(y); {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return stdcmp.Compare(x, y)
}

// indexAt reads element i of an int32/int64 index tensor.
func indexAt(dt acl.DataType, b []byte, i int) int64 {
	if dt == acl.Int32 {
		return int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(b[8*i:]))
}

// putI64 writes element i of an int64 tensor.
func putI64(b []byte, i int, v int64) { binary.LittleEndian.PutUint64(b[8*i:], uint64(v)) }

// axisSplit returns the outer count, the axis dim and the inner count of
// dims around axis.
func axisSplit(dims []int64, axis int) (outer, dim, inner int) {
	return prod(dims[:axis]), int(dims[axis]), prod(dims[axis+1:])
}

func inferArg(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needValueType("input", x.DataType); err != nil {
		return nil, err
	}
	axis, err := normAxis(a.Int(AttrAxis, 0), len(x.Dims))
	if err != nil {
		return nil, err
	}
	dims := slices.Delete(cloneDims(x.Dims), axis, axis+1)
	if a.Bool(AttrKeepDims) {
		dims = slices.Insert(dims, axis, 1)
	}
	return []TensorDesc{{DataType: acl.Int64, Format: x.Format, Dims: dims}}, nil
}

// argKernel: the index of the largest (ArgMax) or smallest (ArgMin)
// element along axis; ties pick the first index, or the last with
// select_last_index.
func argKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, 0), len(x.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	v := loadNums(x.DataType, args[0], prod(x.Dims))
	sign := 1
	if t.Op == OpArgMin {
		sign = -1
	}
	last := t.Attrs.Bool(AttrSelectLastIndex)
	outer, dim, inner := axisSplit(x.Dims, axis)
	for o := range outer {
		for in := range inner {
			base := o*dim*inner + in
			best := 0
			for j := 1; j < dim; j++ {
				c := sign * v.cmp(base+j*inner, base+best*inner)
				if c > 0 || (c == 0 && last) {
					best = j
				}
			}
			putI64(args[1], o*inner+in, int64(best))
		}
	}
	return nil
}

func inferHardmax(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if err := needValueType("input", in[0].DataType); err != nil {
		return nil, err
	}
	if _, err := normAxis(a.Int(AttrAxis, -1), len(in[0].Dims)); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(in[0])}, nil
}

// hardmaxKernel: 1 at the first largest element along axis, 0 elsewhere.
func hardmaxKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, -1), len(x.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	v := loadNums(x.DataType, args[0], prod(x.Dims))
	out := args[1][:x.Size()]
	clear(out)
	outer, dim, inner := axisSplit(x.Dims, axis)
	for o := range outer {
		for in := range inner {
			base := o*dim*inner + in
			best := 0
			for j := 1; j < dim; j++ {
				if v.cmp(base+j*inner, base+best*inner) > 0 {
					best = j
				}
			}
			writeOne(out, x.DataType, base+best*inner)
		}
	}
	return nil
}

// writeOne stores the value 1 at element i.
func writeOne(b []byte, dt acl.DataType, i int) {
	if isIntType(dt) {
		writeInt(b, dt, i, 1)
	} else {
		writeFloat(b, dt, i, 1)
	}
}

func inferTopK(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needValueType("input", x.DataType); err != nil {
		return nil, err
	}
	axis, err := normAxis(a.Int(AttrAxis, -1), len(x.Dims))
	if err != nil {
		return nil, err
	}
	k := a.Int(AttrK, 0)
	if k < 1 || k > x.Dims[axis] {
		return nil, fmt.Errorf("k %d out of range [1, %d] for dims %s", k, x.Dims[axis], dimsString(x.Dims))
	}
	dims := cloneDims(x.Dims)
	dims[axis] = k
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: dims},
		{DataType: acl.Int64, Format: x.Format, Dims: cloneDims(dims)}}, nil
}

// topKKernel keeps the k largest (or smallest) elements along axis, in
// order (sorted or not, the result is sorted, which the unsorted form
// allows); equal values keep the lower index first, as ONNX specifies.
func topKKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, -1), len(x.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	k := int(t.Attrs.Int(AttrK, 0))
	v := loadNums(x.DataType, args[0], prod(x.Dims))
	largest := t.Attrs.Bool(AttrLargest)
	es := x.DataType.Size()
	outer, dim, inner := axisSplit(x.Dims, axis)
	if k < 1 || k > dim {
		return kernelError(t, "k %d out of range [1, %d]", k, dim)
	}
	order := make([]int, dim)
	for o := range outer {
		for in := range inner {
			base := o*dim*inner + in
			for j := range order {
				order[j] = j
			}
			slices.SortStableFunc(order, func(p, q int) int {
				c := v.cmp(base+p*inner, base+q*inner)
				if largest {
					c = -c
				}
				return c
			})
			for j := range k {
				src := base + order[j]*inner
				dst := o*k*inner + j*inner + in
				copy(args[1][dst*es:(dst+1)*es], args[0][src*es:])
				putI64(args[2], dst, int64(order[j]))
			}
		}
	}
	return nil
}

func inferCumSum(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needValueType("input", x.DataType); err != nil {
		return nil, err
	}
	if x.DataType == acl.Bool {
		return nil, &dtypeError{"CumSum of bool"}
	}
	if _, err := normAxis(a.Int(AttrAxis, 0), len(x.Dims)); err != nil {
		return nil, err
	}
	return []TensorDesc{cloneDesc(x)}, nil
}

// cumSumKernel: running sums along axis, in float64 for float types
// (rounded once per element) and in int64 for integers (narrowing wraps).
func cumSumKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, 0), len(x.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	n := prod(x.Dims)
	v := loadNums(x.DataType, args[0], n)
	excl, rev := t.Attrs.Bool(AttrExclusive), t.Attrs.Bool(AttrReverse)
	outer, dim, inner := axisSplit(x.Dims, axis)
	fo, io := make([]float64, n), make([]int64, n)
	for o := range outer {
		for in := range inner {
			var fs float64
			var is int64
			for s := range dim {
				j := s
				if rev {
					j = dim - 1 - s
				}
				p := o*dim*inner + j*inner + in
				if excl {
					fo[p], io[p] = fs, is
				}
				if v.f != nil {
					fs += v.f[p]
				} else {
					is += v.i[p]
				}
				if !excl {
					fo[p], io[p] = fs, is
				}
			}
		}
	}
	if v.f != nil {
		writeFromF64(args[1], x.DataType, fo)
	} else {
		storeInts(x.DataType, args[1], io)
	}
	return nil
}

// ValueDependentCount returns the count that an op whose output shape
// depends on its input values needs as AttrCount: the number of non-zero
// elements for NonZero, of unique elements (or slices along AttrAxis) for
// Unique. Importers compute it from constant inputs, so that the op itself
// has a static shape; a task whose input gives another count fails.
func ValueDependentCount(op OpType, attrs Attrs, in []HostTensor) (int64, error) {
	if len(in) != 1 || int64(len(in[0].Data)) < in[0].Desc.Size() {
		return 0, acl.Errorf("ge.ValueDependentCount", acl.CodeInvalidParam, "%s takes one input with its data", op)
	}
	x := in[0]
	if err := checkDesc(x.Desc); err != nil {
		return 0, acl.Errorf("ge.ValueDependentCount", acl.CodeInvalidParam, "%s input: %v", op, err)
	}
	if !numeric(x.Desc.DataType) {
		return 0, acl.Errorf("ge.ValueDependentCount", acl.CodeUnsupportedDataType, "%s of %s", op, x.Desc.DataType)
	}
	switch op {
	case OpNonZero:
		return int64(countNonZero(x.Desc, x.Data)), nil
	case OpUnique:
		u, err := uniqueOf(x.Desc, x.Data, attrs)
		if err != nil {
			return 0, acl.Errorf("ge.ValueDependentCount", acl.CodeInvalidParam, "Unique: %v", err)
		}
		return int64(len(u.first)), nil
	}
	return 0, acl.Errorf("ge.ValueDependentCount", acl.CodeInvalidParam, "%s has no value-dependent count", op)
}

func countNonZero(d TensorDesc, b []byte) int {
	v := loadNums(d.DataType, b, prod(d.Dims))
	n := 0
	for i := range prod(d.Dims) {
		if v.nonZero(i) {
			n++
		}
	}
	return n
}

func (v numVals) nonZero(i int) bool {
	if v.f == nil {
		return v.i[i] != 0
	}
	return v.f[i] != 0
}

func inferNonZero(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needValueType("input", x.DataType); err != nil {
		return nil, err
	}
	if len(x.Dims) == 0 {
		return nil, fmt.Errorf("NonZero of a scalar gives an empty tensor (empty tensors are not supported)")
	}
	n := a.Int(AttrCount, 0)
	if n < 1 || n > x.NumElements() {
		return nil, fmt.Errorf("count %d out of range [1, %d] (a count of 0 is an empty tensor, not supported)", n, x.NumElements())
	}
	return []TensorDesc{{DataType: acl.Int64, Format: acl.FormatND, Dims: []int64{int64(len(x.Dims)), n}}}, nil
}

// nonZeroKernel writes the indices of the non-zero elements, one row per
// dim, in row-major order.
func nonZeroKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	n := int(t.Attrs.Int(AttrCount, 0))
	v := loadNums(x.DataType, args[0], prod(x.Dims))
	if got := countNonZero(x, args[0]); got != n {
		return kernelError(t, "input has %d non-zero elements, the op was built for %d", got, n)
	}
	r := len(x.Dims)
	idx := make([]int, r)
	j := 0
	for i := range prod(x.Dims) {
		if v.nonZero(i) {
			for d := range r {
				putI64(args[1], d*n+j, int64(idx[d]))
			}
			j++
		}
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < int(x.Dims[d]) {
				break
			}
			idx[d] = 0
		}
	}
	return nil
}

// uniqueResult describes the unique slices of a tensor along an axis (the
// elements of the flattened tensor without one): for every output
// position the first input slice holding it and how often it occurs, and
// for every input slice its output position.
type uniqueResult struct {
	first, counts []int64
	inverse       []int64
	outer, dim    int
	inner         int
}

func uniqueOf(d TensorDesc, b []byte, a Attrs) (*uniqueResult, error) {
	u := &uniqueResult{outer: 1, dim: prod(d.Dims), inner: 1}
	if _, ok := a[AttrAxis]; ok {
		axis, err := normAxis(a.Int(AttrAxis, 0), len(d.Dims))
		if err != nil {
			return nil, err
		}
		u.outer, u.dim, u.inner = axisSplit(d.Dims, axis)
	}
	v := loadNums(d.DataType, b, prod(d.Dims))
	slice := func(p, q int) int {
		for o := range u.outer {
			for in := range u.inner {
				base := o*u.dim*u.inner + in
				if c := v.cmp(base+p*u.inner, base+q*u.inner); c != 0 {
					return c
				}
			}
		}
		return 0
	}
	order := make([]int, u.dim)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, slice)
	// Groups of equal slices in sorted order; the stable sort puts each
	// group's first occurrence first.
	var groups [][2]int // first input index, count
	group := make([]int, u.dim)
	for i, p := range order {
		if i == 0 || slice(order[i-1], p) != 0 {
			groups = append(groups, [2]int{p, 0})
		}
		groups[len(groups)-1][1]++
		group[p] = len(groups) - 1
	}
	pos := make([]int, len(groups))
	for i := range pos {
		pos[i] = i
	}
	if !a.Bool(AttrSorted) {
		// Output in order of first occurrence.
		slices.SortFunc(pos, func(p, q int) int { return stdcmp.Compare(groups[p][0], groups[q][0]) })
	}
	at := make([]int, len(groups)) // group -> output position
	for o, g := range pos {
		at[g] = o
		u.first = append(u.first, int64(groups[g][0]))
		u.counts = append(u.counts, int64(groups[g][1]))
	}
	u.inverse = make([]int64, u.dim)
	for i := range u.dim {
		u.inverse[i] = int64(at[group[i]])
	}
	return u, nil
}

func inferUnique(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if err := needValueType("input", x.DataType); err != nil {
		return nil, err
	}
	n := a.Int(AttrCount, 0)
	ydims, len0 := []int64{n}, x.NumElements()
	if _, ok := a[AttrAxis]; ok {
		axis, err := normAxis(a.Int(AttrAxis, 0), len(x.Dims))
		if err != nil {
			return nil, err
		}
		ydims = cloneDims(x.Dims)
		ydims[axis], len0 = n, x.Dims[axis]
	}
	if n < 1 || n > len0 {
		return nil, fmt.Errorf("count %d out of range [1, %d]", n, len0)
	}
	i64 := func(d ...int64) TensorDesc { return TensorDesc{DataType: acl.Int64, Format: acl.FormatND, Dims: d} }
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: ydims}, i64(n), i64(len0), i64(n)}, nil
}

// uniqueKernel writes the unique elements (or slices along axis), sorted
// or in order of first occurrence, their first indices, every input
// element's (slice's) output position, and the counts.
func uniqueKernel(t *Task, args [][]byte) error {
	x := t.Inputs[0]
	u, err := uniqueOf(x, args[0], t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	n := int(t.Attrs.Int(AttrCount, 0))
	if len(u.first) != n {
		return kernelError(t, "input has %d unique values, the op was built for %d", len(u.first), n)
	}
	es := x.DataType.Size()
	for o := range u.outer {
		for j, f := range u.first {
			src := (o*u.dim + int(f)) * u.inner * es
			dst := (o*n + j) * u.inner * es
			copy(args[1][dst:dst+u.inner*es], args[0][src:])
		}
	}
	for j := range n {
		putI64(args[2], j, u.first[j])
		putI64(args[4], j, u.counts[j])
	}
	for i, p := range u.inverse {
		putI64(args[3], i, p)
	}
	return nil
}

// ArgReduce returns the int64 index of the largest (OpArgMax) or smallest
// (OpArgMin) element of x along axis; ties pick the first index, or the
// last with lastIndex.
func (g *Graph) ArgReduce(op OpType, x *Tensor, axis int, keepDims, lastIndex bool, opts ...OpOption) *Tensor {
	return g.single(op, []*Tensor{x}, Attrs{AttrAxis: IntAttr(int64(axis)), AttrKeepDims: BoolAttr(keepDims),
		AttrSelectLastIndex: BoolAttr(lastIndex)}, opts)
}

// TopK returns the k largest (or smallest) elements of x along axis, in
// order, and their int64 indices; equal values keep the lower index first.
func (g *Graph) TopK(x *Tensor, k int64, axis int, largest bool, opts ...OpOption) (values, indices *Tensor) {
	n := g.addOp(OpTopK, []*Tensor{x}, Attrs{AttrK: IntAttr(k), AttrAxis: IntAttr(int64(axis)),
		AttrLargest: BoolAttr(largest), AttrSorted: BoolAttr(true)}, opts...)
	return n.Output(0), n.Output(1)
}

// Einsum evaluates an Einstein summation ("bij,bjk->bik", "ii->i",
// "...ij->...ji") over xs, which share one type.
func (g *Graph) Einsum(equation string, xs []*Tensor, opts ...OpOption) *Tensor {
	return g.single(OpEinsum, xs, Attrs{AttrEquation: StringAttr(equation)}, opts)
}
