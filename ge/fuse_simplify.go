package ge

import "github.com/ascend-go/cann/acl"

// simplify bypasses the nodes that compute nothing.
func (f *fuser) simplify() {
	for _, n := range f.live {
		if !f.plain(n) || len(n.inputs) != 1 {
			continue
		}
		x, y := n.inputs[0], n.outs[0]
		switch n.op {
		case OpIdentity:
			f.bypass(y, x)
		case OpReshape:
			if dimsEqual(x.desc.Dims, y.desc.Dims) && x.desc.Format == y.desc.Format {
				f.bypass(y, x)
			}
		case OpCast:
			if x.desc.DataType == y.desc.DataType {
				f.bypass(y, x)
				continue
			}
			p := x.node
			if p.op == OpCast && f.plain(p) && p.inputs[0].desc.DataType == y.desc.DataType &&
				lossless(y.desc.DataType, x.desc.DataType) {
				f.bypass(y, p.inputs[0])
			}
		}
	}
}

// lossless reports whether every value of type a is exactly a value of
// type b, so that a Cast a → b → a returns its input.
func lossless(a, b acl.DataType) bool {
	wider := map[acl.DataType][]acl.DataType{
		acl.Float16:  {acl.Float32, acl.Float64},
		acl.BFloat16: {acl.Float32, acl.Float64},
		acl.Float32:  {acl.Float64},
		acl.Int8:     {acl.Int16, acl.Int32, acl.Int64, acl.Float32, acl.Float64},
		acl.Uint8:    {acl.Int16, acl.Uint16, acl.Int32, acl.Uint32, acl.Int64, acl.Uint64, acl.Float32, acl.Float64},
		acl.Int16:    {acl.Int32, acl.Int64, acl.Float32, acl.Float64},
		acl.Uint16:   {acl.Int32, acl.Uint32, acl.Int64, acl.Uint64, acl.Float32, acl.Float64},
		acl.Int32:    {acl.Int64, acl.Float64},
		acl.Uint32:   {acl.Int64, acl.Uint64, acl.Float64},
	}
	for _, w := range wider[a] {
		if w == b {
			return true
		}
	}
	return false
}
