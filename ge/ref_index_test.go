package ge_test

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// float64 references of the index ops, written from the ONNX definitions
// with multi-index arithmetic (unravel/ravel) and no shared code with the
// kernels. Integer values are exact in float64 at the sizes tested.

func init() {
	refOps[ge.OpArgMax] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		return refArg(in[0], a, out, false)
	}
	refOps[ge.OpArgMin] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		return refArg(in[0], a, out, true)
	}
	refOps[ge.OpHardmax] = refHardmax
	refOps[ge.OpTopK] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		v, _ := refTopK(in[0], a, out.Dims)
		return v
	}
	refOps[ge.OpCumSum] = refCumSum
	refOps[ge.OpNonZero] = refNonZero
	refOps[ge.OpUnique] = func(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
		return refUnique(in[0], a)[0]
	}
	refOps[ge.OpGatherElements] = refGatherElements
	refOps[ge.OpGatherND] = refGatherND
	refOps[ge.OpScatterElements] = refScatterElements
	refOps[ge.OpScatterND] = refScatterND
	refOps[ge.OpOneHot] = refOneHot
	refOps[ge.OpTile] = refTile
	refOps[ge.OpTrilu] = refTrilu
	refOps[ge.OpReverseSequence] = refReverseSequence
	refOps[ge.OpDet] = refDet
	refOps[ge.OpEinsum] = refEinsum
	refOps[ge.OpPad] = refPad
}

// refPad maps every output position to its source per mode (numpy.pad's
// constant, edge, reflect and wrap).
func refPad(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	p := a.Ints(ge.AttrPads)
	fill := a.Float(ge.AttrValue, 0)
	if len(in) > 1 {
		fill = in[1].v[0]
	}
	o := make([]float64, numel(out.Dims))
	for i := range o {
		idx := unravel(i, out.Dims)
		inside := true
		for k := range idx {
			s, d := idx[k]-int(p[k]), int(x.dims[k])
			switch a.String(ge.AttrMode) {
			case "edge":
				s = min(max(s, 0), d-1)
			case "wrap":
				for s < 0 {
					s += d
				}
				s %= d
			case "reflect":
				for s < 0 || s >= d {
					if d == 1 {
						s = 0
					} else if s < 0 {
						s = -s
					} else {
						s = 2*(d-1) - s
					}
				}
			}
			if s < 0 || s >= d {
				inside = false
			}
			idx[k] = s
		}
		o[i] = fill
		if inside {
			o[i] = x.v[ravel(idx, x.dims)]
		}
	}
	if isIdxInt(x.dt) {
		return refVal{x.dt, out.Dims, o}
	}
	return rounded(x.dt, out.Dims, o)
}

func refIdxWrap(v float64, dim int64) int {
	if v < 0 {
		v += float64(dim)
	}
	return int(v)
}

func refArg(x refVal, a ge.Attrs, out ge.TensorDesc, isMin bool) refVal {
	axis := normAxisRef(a.Int(ge.AttrAxis, 0), len(x.dims))
	o := make([]float64, numel(out.Dims))
	for i := range o {
		idx := unravel(i, out.Dims)
		if !a.Bool(ge.AttrKeepDims) {
			idx = append(idx[:axis], append([]int{0}, idx[axis:]...)...)
		}
		best := 0
		for j := range int(x.dims[axis]) {
			idx[axis] = j
			v := x.v[ravel(idx, x.dims)]
			idx[axis] = best
			b := x.v[ravel(idx, x.dims)]
			better := v > b
			if isMin {
				better = v < b
			}
			if better || (v == b && a.Bool(ge.AttrSelectLastIndex)) {
				best = j
			}
		}
		o[i] = float64(best)
	}
	return refVal{acl.Int64, out.Dims, o}
}

func refHardmax(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	axis := normAxisRef(a.Int(ge.AttrAxis, -1), len(x.dims))
	o := make([]float64, len(x.v))
	for i := range o {
		idx := unravel(i, x.dims)
		me := idx[axis]
		best := 0
		for j := range int(x.dims[axis]) {
			idx[axis] = j
			v := x.v[ravel(idx, x.dims)]
			idx[axis] = best
			if v > x.v[ravel(idx, x.dims)] {
				best = j
			}
		}
		if best == me {
			o[i] = 1
		}
	}
	return refVal{x.dt, x.dims, o}
}

// refTopK returns values and indices.
func refTopK(x refVal, a ge.Attrs, dims []int64) (refVal, refVal) {
	axis := normAxisRef(a.Int(ge.AttrAxis, -1), len(x.dims))
	vals, ids := make([]float64, numel(dims)), make([]float64, numel(dims))
	for i := range vals {
		idx := unravel(i, dims)
		pos := make([]int, x.dims[axis])
		for j := range pos {
			pos[j] = j
		}
		at := func(j int) float64 {
			c := append([]int{}, idx...)
			c[axis] = j
			return x.v[ravel(c, x.dims)]
		}
		sort.SliceStable(pos, func(p, q int) bool {
			if a.Bool(ge.AttrLargest) {
				return at(pos[p]) > at(pos[q])
			}
			return at(pos[p]) < at(pos[q])
		})
		ids[i] = float64(pos[idx[axis]])
		vals[i] = at(pos[idx[axis]])
	}
	return refVal{x.dt, dims, vals}, refVal{acl.Int64, dims, ids}
}

func refCumSum(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	axis := normAxisRef(a.Int(ge.AttrAxis, 0), len(x.dims))
	o := make([]float64, len(x.v))
	for i := range o {
		idx := unravel(i, x.dims)
		me := idx[axis]
		var s float64
		for j := range int(x.dims[axis]) {
			in := j <= me
			if a.Bool(ge.AttrReverse) {
				in = j >= me
			}
			if a.Bool(ge.AttrExclusive) && j == me {
				in = false
			}
			if in {
				idx[axis] = j
				s += x.v[ravel(idx, x.dims)]
			}
		}
		o[i] = s
	}
	if x.dt == acl.Int8 || x.dt == acl.Int16 || x.dt == acl.Int32 || x.dt == acl.Uint8 {
		for i := range o {
			o[i] = refIdxNarrow(x.dt, o[i])
		}
		return refVal{x.dt, x.dims, o}
	}
	return rounded(x.dt, x.dims, o)
}

// refIdxNarrow wraps an integer to dt's width as integer casts do.
func refIdxNarrow(dt acl.DataType, v float64) float64 {
	switch dt {
	case acl.Int8:
		return float64(int8(int64(v)))
	case acl.Uint8:
		return float64(uint8(int64(v)))
	case acl.Int16:
		return float64(int16(int64(v)))
	case acl.Int32:
		return float64(int32(int64(v)))
	}
	return v
}

func refNonZero(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	var cols [][]int
	for i, v := range x.v {
		if v != 0 {
			cols = append(cols, unravel(i, x.dims))
		}
	}
	o := make([]float64, len(x.dims)*len(cols))
	for j, c := range cols {
		for d := range x.dims {
			o[d*len(cols)+j] = float64(c[d])
		}
	}
	return refVal{acl.Int64, []int64{int64(len(x.dims)), int64(len(cols))}, o}
}

// refUnique returns Y, indices, inverse_indices and counts.
func refUnique(x refVal, a ge.Attrs) []refVal {
	// Slices along axis (each element without one), as float64 lists.
	outerDims, axis := []int64{int64(len(x.v))}, 0
	var slices [][]float64
	if _, ok := a[ge.AttrAxis]; ok {
		axis = normAxisRef(a.Int(ge.AttrAxis, 0), len(x.dims))
		outerDims = x.dims
	}
	n := int(outerDims[axis])
	for j := range n {
		var s []float64
		for i, v := range x.v {
			idx := unravel(i, outerDims)
			if idx[axis] == j {
				s = append(s, v)
			}
		}
		slices = append(slices, s)
	}
	less := func(p, q []float64) int {
		for i := range p {
			if p[i] != q[i] {
				if p[i] < q[i] {
					return -1
				}
				return 1
			}
		}
		return 0
	}
	var uniq []int // first index of each distinct slice, in first-occurrence order
	for j := range n {
		found := false
		for _, u := range uniq {
			if less(slices[u], slices[j]) == 0 {
				found = true
			}
		}
		if !found {
			uniq = append(uniq, j)
		}
	}
	if a.Bool(ge.AttrSorted) {
		sort.SliceStable(uniq, func(p, q int) bool { return less(slices[uniq[p]], slices[uniq[q]]) < 0 })
	}
	var first, inv, counts []float64
	for _, u := range uniq {
		first = append(first, float64(u))
		c := 0
		for j := range n {
			if less(slices[u], slices[j]) == 0 {
				c++
			}
		}
		counts = append(counts, float64(c))
	}
	for j := range n {
		for k, u := range uniq {
			if less(slices[u], slices[j]) == 0 {
				inv = append(inv, float64(k))
			}
		}
	}
	ydims := append([]int64{}, outerDims...)
	ydims[axis] = int64(len(uniq))
	y := make([]float64, numel(ydims))
	for i := range y {
		idx := unravel(i, ydims)
		idx[axis] = uniq[idx[axis]]
		y[i] = x.v[ravel(idx, outerDims)]
	}
	k := int64(len(uniq))
	return []refVal{{x.dt, ydims, y}, {acl.Int64, []int64{k}, first}, {acl.Int64, []int64{int64(n)}, inv}, {acl.Int64, []int64{k}, counts}}
}

func refGatherElements(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, id := in[0], in[1]
	axis := normAxisRef(a.Int(ge.AttrAxis, 0), len(x.dims))
	o := make([]float64, len(id.v))
	for i := range o {
		idx := unravel(i, id.dims)
		idx[axis] = refIdxWrap(id.v[i], x.dims[axis])
		o[i] = x.v[ravel(idx, x.dims)]
	}
	return refVal{x.dt, id.dims, o}
}

func refGatherND(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, id := in[0], in[1]
	b := int(a.Int(ge.AttrBatchDims, 0))
	k := int(id.dims[len(id.dims)-1])
	o := make([]float64, numel(out.Dims))
	q := len(id.dims) - 1
	for i := range o {
		oi := unravel(i, out.Dims)
		// out index = tuple index (q dims) ++ slice index.
		xi := append([]int{}, oi[:b]...)
		for c := range k {
			ti := append(append([]int{}, oi[:q]...), c)
			xi = append(xi, refIdxWrap(id.v[ravel(ti, id.dims)], x.dims[b+c]))
		}
		xi = append(xi, oi[q:]...)
		o[i] = x.v[ravel(xi, x.dims)]
	}
	return refVal{x.dt, out.Dims, o}
}

func refScatterCombine(r string, dt acl.DataType, x, y float64) float64 {
	switch r {
	case "add":
		x += y
	case "mul":
		x *= y
	case "max":
		x = math.Max(x, y)
	case "min":
		x = math.Min(x, y)
	default:
		x = y
	}
	if dt == acl.Int8 || dt == acl.Int16 || dt == acl.Int32 || dt == acl.Uint8 {
		return refIdxNarrow(dt, x)
	}
	return roundTo(dt, x)
}

func refScatterElements(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, id, up := in[0], in[1], in[2]
	axis := normAxisRef(a.Int(ge.AttrAxis, 0), len(x.dims))
	o := append([]float64{}, x.v...)
	for i := range id.v {
		idx := unravel(i, id.dims)
		idx[axis] = refIdxWrap(id.v[i], x.dims[axis])
		p := ravel(idx, x.dims)
		o[p] = refScatterCombine(a.String(ge.AttrReduction), x.dt, o[p], up.v[i])
	}
	return refVal{x.dt, x.dims, o}
}

func refScatterND(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, id, up := in[0], in[1], in[2]
	k := int(id.dims[len(id.dims)-1])
	o := append([]float64{}, x.v...)
	for i := range up.v {
		ui := unravel(i, up.dims)
		q := len(id.dims) - 1
		var xi []int
		for c := range k {
			ti := append(append([]int{}, ui[:q]...), c)
			xi = append(xi, refIdxWrap(id.v[ravel(ti, id.dims)], x.dims[c]))
		}
		xi = append(xi, ui[q:]...)
		p := ravel(xi, x.dims)
		o[p] = refScatterCombine(a.String(ge.AttrReduction), x.dt, o[p], up.v[i])
	}
	return refVal{x.dt, x.dims, o}
}

func refOneHot(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	id, vals := in[0], in[1]
	axis := normAxisRef(a.Int(ge.AttrAxis, -1), len(id.dims)+1)
	depth := a.Int(ge.AttrDepth, 0)
	o := make([]float64, numel(out.Dims))
	for i := range o {
		oi := unravel(i, out.Dims)
		ii := append(append([]int{}, oi[:axis]...), oi[axis+1:]...)
		v := math.Trunc(id.v[ravel(ii, id.dims)])
		if v < 0 && a.Bool(ge.AttrNegativeIndices) {
			v += float64(depth)
		}
		o[i] = vals.v[0]
		if int(v) == oi[axis] {
			o[i] = vals.v[1]
		}
	}
	return refVal{vals.dt, out.Dims, o}
}

func refTile(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	o := make([]float64, numel(out.Dims))
	for i := range o {
		idx := unravel(i, out.Dims)
		for d := range idx {
			idx[d] %= int(x.dims[d])
		}
		o[i] = x.v[ravel(idx, x.dims)]
	}
	return refVal{x.dt, out.Dims, o}
}

func refTrilu(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	k := int(a.Int(ge.AttrK, 0))
	o := append([]float64{}, x.v...)
	r := len(x.dims)
	for i := range o {
		idx := unravel(i, x.dims)
		row, col := idx[r-2], idx[r-1]
		keep := col-row <= k
		if a.Bool(ge.AttrUpper) {
			keep = col-row >= k
		}
		if !keep {
			o[i] = 0
		}
	}
	return refVal{x.dt, x.dims, o}
}

func refReverseSequence(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, sl := in[0], in[1]
	b, tm := int(a.Int(ge.AttrBatchAxis, 1)), int(a.Int(ge.AttrTimeAxis, 0))
	o := make([]float64, len(x.v))
	for i := range o {
		idx := unravel(i, x.dims)
		if n := int(sl.v[idx[b]]); idx[tm] < n {
			idx[tm] = n - 1 - idx[tm]
		}
		o[i] = x.v[ravel(idx, x.dims)]
	}
	return refVal{x.dt, x.dims, o}
}

// refDet expands along the first row (Laplace), independent of LU.
func refDet(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	m := int(x.dims[len(x.dims)-1])
	o := make([]float64, numel(out.Dims))
	for b := range o {
		mat := x.v[b*m*m : (b+1)*m*m]
		o[b] = refLaplace(mat, m, idxAll(m))
	}
	return rounded(x.dt, out.Dims, o)
}

func idxAll(m int) []int {
	c := make([]int, m)
	for i := range c {
		c[i] = i
	}
	return c
}

// refLaplace is the determinant of the rows len(m)-len(cols).. of mat
// restricted to cols.
func refLaplace(mat []float64, m int, cols []int) float64 {
	row := m - len(cols)
	if len(cols) == 1 {
		return mat[row*m+cols[0]]
	}
	var s float64
	sign := 1.0
	for k, c := range cols {
		rest := append(append([]int{}, cols[:k]...), cols[k+1:]...)
		s += sign * mat[row*m+c] * refLaplace(mat, m, rest)
		sign = -sign
	}
	return s
}

// refEinsum evaluates letter-only equations (explicit "->" output) by
// enumerating every assignment of the letters.
func refEinsum(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	eq := a.String(ge.AttrEquation)
	lhs, rhs, ok := strings.Cut(eq, "->")
	if !ok || strings.Contains(eq, ".") {
		t.Fatalf("refEinsum: equation %q: the reference takes explicit letter-only equations", eq)
	}
	terms := strings.Split(lhs, ",")
	size := map[byte]int{}
	var letters []byte
	for k, term := range terms {
		for d := range len(term) {
			if _, seen := size[term[d]]; !seen {
				letters = append(letters, term[d])
			}
			size[term[d]] = int(in[k].dims[d])
		}
	}
	o := make([]float64, numel(out.Dims))
	total := 1
	for _, l := range letters {
		total *= size[l]
	}
	val := map[byte]int{}
	for n := range total {
		r := n
		for i := len(letters) - 1; i >= 0; i-- {
			val[letters[i]] = r % size[letters[i]]
			r /= size[letters[i]]
		}
		p := 1.0
		for k, term := range terms {
			idx := make([]int, len(term))
			for d := range len(term) {
				idx[d] = val[term[d]]
			}
			p *= in[k].v[ravel(idx, in[k].dims)]
		}
		oi := make([]int, len(rhs))
		for d := range len(rhs) {
			oi[d] = val[rhs[d]]
		}
		o[ravel(oi, out.Dims)] += p
	}
	return rounded(in[0].dt, out.Dims, o)
}
