package ge

import (
	"fmt"
	"strings"

	"github.com/ascend-go/cann/acl"
)

// Limits that keep every size computation far from overflow. They apply to
// graphs, compiled models and parsed models alike.
const (
	MaxRank        = 8       // dimensions of a tensor
	MaxDim         = 1 << 40 // largest single dimension
	MaxTensorBytes = 1 << 40 // largest tensor, in bytes
	MaxMemorySize  = 1 << 42 // largest model memory or weight region
	MemAlignSize   = 512     // alignment of every memory block (GE's MEM_ALIGN_SIZE)
)

// TensorDesc describes a tensor: element type, layout label and dims. Data
// is always dense and row-major; the format is carried for the caller's
// benefit (aclmdlGetInputFormat) and must be a plain (non-fractal) format.
// A TensorDesc is a plain value, safe for concurrent reads; copy Dims
// before mutating a shared one.
type TensorDesc struct {
	DataType acl.DataType
	Format   acl.Format
	Dims     []int64
}

// NumElements is the product of the dims (1 for a scalar).
func (d TensorDesc) NumElements() int64 {
	n := int64(1)
	for _, v := range d.Dims {
		n *= v
	}
	return n
}

// Size is the byte size of the tensor: elements × element size.
func (d TensorDesc) Size() int64 { return d.NumElements() * int64(d.DataType.Size()) }

// Equal reports whether two descriptors have the same dtype, format and dims.
func (d TensorDesc) Equal(o TensorDesc) bool {
	return d.DataType == o.DataType && d.Format == o.Format && dimsEqual(d.Dims, o.Dims)
}

// String formats the descriptor as "f32[2,3]".
func (d TensorDesc) String() string {
	return fmt.Sprintf("%s%s", shortType(d.DataType), dimsString(d.Dims))
}

func dimsEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func dimsString(d []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, v)
	}
	b.WriteByte(']')
	return b.String()
}

func shortType(t acl.DataType) string {
	switch t {
	case acl.Float32:
		return "f32"
	case acl.Float16:
		return "f16"
	case acl.BFloat16:
		return "bf16"
	case acl.Int32:
		return "i32"
	case acl.Int64:
		return "i64"
	}
	return strings.ToLower(strings.TrimPrefix(t.String(), "ACL_"))
}

// plainFormat reports whether f describes a dense row-major layout the
// kernels can compute on.
func plainFormat(f acl.Format) bool {
	switch f {
	case acl.FormatND, acl.FormatNCHW, acl.FormatNHWC, acl.FormatHWCN, acl.FormatNDHWC,
		acl.FormatNCDHW, acl.FormatNC, acl.FormatNCL:
		return true
	}
	return false
}

// storable reports whether tensors of type t can live in a model: a whole
// number of bytes per element.
func storable(t acl.DataType) bool {
	return t.Valid() && t.Bits() >= 8 && t.Bits()%8 == 0 && t != acl.String
}

// checkDesc validates a descriptor against the limits.
func checkDesc(d TensorDesc) error { return checkDescWith(d, false) }

// checkDescWith is checkDesc that, with empty set, also takes zero dims.
func checkDescWith(d TensorDesc, empty bool) error {
	if !storable(d.DataType) {
		return fmt.Errorf("data type %s cannot be stored in a model", d.DataType)
	}
	if !plainFormat(d.Format) {
		return fmt.Errorf("format %s is not a plain row-major format", d.Format)
	}
	if len(d.Dims) > MaxRank {
		return fmt.Errorf("rank %d exceeds %d", len(d.Dims), MaxRank)
	}
	n := int64(d.DataType.Size())
	for _, v := range d.Dims {
		if v == 0 && empty {
			continue
		}
		if v == 0 {
			return fmt.Errorf("dims %s: a zero dim (empty tensors are not supported in a model)", dimsString(d.Dims))
		}
		if v < 0 || v > MaxDim {
			return fmt.Errorf("dims %s: every dim must be in [1, %d]", dimsString(d.Dims), int64(MaxDim))
		}
		if n > MaxTensorBytes/v {
			return fmt.Errorf("dims %s: tensor exceeds %d bytes", dimsString(d.Dims), int64(MaxTensorBytes))
		}
		n *= v
	}
	return nil
}

// alignUp rounds n up to a multiple of MemAlignSize.
func alignUp(n int64) int64 { return (n + MemAlignSize - 1) &^ (MemAlignSize - 1) }

func cloneDims(d []int64) []int64 { return append([]int64(nil), d...) }

func cloneDesc(d TensorDesc) TensorDesc { d.Dims = cloneDims(d.Dims); return d }
