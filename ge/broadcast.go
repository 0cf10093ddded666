package ge

import "unsafe"

// bcastWalk visits the elements of a tensor of dims od in row-major order
// and calls f with the element's index and, for each input k of dims
// ins[k] (numpy-broadcast to od), the element offset into that input. It
// serves the ops whose inputs broadcast in general form (Where, Expand,
// PRelu, comparisons); the float Add/Sub/Mul/Div path walks rows instead.
func bcastWalk(od []int64, ins [][]int64, f func(i int, offs []int)) {
	n := prod(od)
	r := len(od)
	st := make([][]int, len(ins))
	for k, d := range ins {
		st[k] = broadcastStrides(d, od)
	}
	idx := make([]int, r)
	offs := make([]int, len(ins))
	for i := range n {
		f(i, offs)
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			for k := range offs {
				offs[k] += st[k][d]
			}
			if idx[d] < int(od[d]) {
				break
			}
			for k := range offs {
				offs[k] -= st[k][d] * idx[d]
			}
			idx[d] = 0
		}
	}
}

// broadcastAll broadcasts any number of dims together.
func broadcastAll(ds ...[]int64) ([]int64, error) {
	out := cloneDims(ds[0])
	for _, d := range ds[1:] {
		var err error
		if out, err = broadcastDims(out, d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// unsafeBytes views a []uint64 as bytes (for 8-byte aligned buffers).
func unsafeBytes(w []uint64) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
}
