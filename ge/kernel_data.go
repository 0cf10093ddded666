package ge

import (
	"encoding/binary"

	"github.com/ascend-go/cann/acl"
)

// Data-movement kernels work on bytes and so take every storable type.

// gatherKernel: out = params[..., indices[...], ...] along axis. An index
// outside [0, dim) fails the task, as the device raises an exception,
// after the rows before it were written.
func gatherKernel(t *Task, args [][]byte) error {
	p, id := t.Inputs[0], t.Inputs[1]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, 0), len(p.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	es := p.DataType.Size()
	outer, dim, inner := prod(p.Dims[:axis]), p.Dims[axis], prod(p.Dims[axis+1:])*es
	nIdx := prod(id.Dims)
	src, dst, ib := args[0], args[2], args[1]
	wrap := t.Attrs.Bool(AttrNegativeIndices)
	for o := range outer {
		for j := range nIdx {
			var v int64
			if id.DataType == acl.Int32 {
				v = int64(int32(binary.LittleEndian.Uint32(ib[4*j:])))
			} else {
				v = int64(binary.LittleEndian.Uint64(ib[8*j:]))
			}
			if v < 0 && wrap {
				v += dim
			}
			if v < 0 || v >= dim {
				return kernelError(t, "index %d at position %d out of range [0, %d)", v, j, dim)
			}
			s := (o*int(dim) + int(v)) * inner
			d := (o*nIdx + j) * inner
			copy(dst[d:d+inner], src[s:s+inner])
		}
	}
	return nil
}

func concatKernel(t *Task, args [][]byte) error {
	od := t.Outputs[0]
	axis, err := normAxis(t.Attrs.Int(AttrAxis, 0), len(od.Dims))
	if err != nil {
		return kernelError(t, "%v", err)
	}
	es := od.DataType.Size()
	outer, inner := prod(od.Dims[:axis]), prod(od.Dims[axis+1:])*es
	dst := args[len(t.Inputs)]
	outRow := int(od.Dims[axis]) * inner
	for o := range outer {
		off := o * outRow
		for i, d := range t.Inputs {
			chunk := int(d.Dims[axis]) * inner
			copy(dst[off:off+chunk], args[i][o*chunk:(o+1)*chunk])
			off += chunk
		}
	}
	return nil
}

func sliceKernel(t *Task, args [][]byte) error {
	d := t.Inputs[0]
	var bv, sv [maxStackRank]int64
	begin, size, ok := sliceBoundsInto(bv[:0], sv[:0], d.Dims, t.Attrs)
	if !ok {
		var err error
		if begin, size, err = sliceBounds(d.Dims, t.Attrs); err != nil {
			return kernelError(t, "%v", err)
		}
	}
	es := d.DataType.Size()
	r := len(d.Dims)
	if r == 0 {
		copy(args[1][:es], args[0])
		return nil
	}
	// Element strides of the source; the destination is dense.
	var stv, idxv [maxStackRank]int
	st, idx := stv[:0], idxv[:0]
	if r > maxStackRank {
		st, idx = make([]int, 0, r), make([]int, 0, r)
	}
	st, idx = st[:r], idx[:r]
	acc := 1
	for i := r - 1; i >= 0; i-- {
		st[i] = acc
		acc *= int(d.Dims[i])
	}
	run := int(size[r-1]) * es
	src, dst := args[0], args[1]
	for off := 0; off < len(dst) && off < prod(size)*es; off += run {
		so := int(begin[r-1]) * es
		for i := 0; i < r-1; i++ {
			so += (int(begin[i]) + idx[i]) * st[i] * es
		}
		copy(dst[off:off+run], src[so:so+run])
		for i := r - 2; i >= 0; i-- {
			idx[i]++
			if idx[i] < int(size[i]) {
				break
			}
			idx[i] = 0
		}
	}
	return nil
}

func memcpyKernel(t *Task, args [][]byte) error {
	n := t.Inputs[0].Size()
	copy(args[1][:n], args[0][:n])
	return nil
}

// sliceBoundsInto is sliceBounds appending to begin and size (stack
// arrays in the kernel); ok is false for anything sliceBounds would refuse
// or a rank past their capacity, and the caller asks sliceBounds why.
func sliceBoundsInto(begin, size []int64, dims []int64, a Attrs) ([]int64, []int64, bool) {
	b, s := a.Ints(AttrBegin), a.Ints(AttrSize)
	if len(b) != len(dims) || len(s) != len(dims) || len(dims) > cap(begin) || len(dims) > cap(size) {
		return nil, nil, false
	}
	for i, d := range dims {
		bi, si := b[i], s[i]
		if si == -1 {
			si = d - bi
		}
		if bi < 0 || bi >= d || si < 1 || si > d-bi {
			return nil, nil, false
		}
		begin, size = append(begin, bi), append(size, si)
	}
	return begin, size, true
}
