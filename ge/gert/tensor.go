package gert

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// Shape is a tensor shape: one extent per dimension.
type Shape []int64

// NumElements returns the product of the extents (1 for a scalar) and
// whether it is well defined (no negative extent, no overflow).
func (s Shape) NumElements() (int64, bool) {
	n := int64(1)
	for _, d := range s {
		if d < 0 || (d != 0 && n > (1<<62)/d) {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// StorageShape is a tensor's origin shape (as the graph states it) and its
// storage shape (as it is laid out in memory).
type StorageShape struct {
	Origin, Storage Shape
}

// StorageFormat is a tensor's origin and storage formats.
type StorageFormat struct {
	Origin, Storage acl.Format
}

// Tensor is GE's runtime-V2 tensor: shapes, formats, data type and its data.
// The placement is the data's (Tensor.Placement, TensorData.Placement). A
// Tensor is not safe for concurrent use.
type Tensor struct {
	Shape    StorageShape
	Format   StorageFormat
	DataType acl.DataType
	data     TensorData
}

// NewTensor returns a tensor of the given shape (origin and storage alike),
// ND format and data type, with empty data that asks for placement p.
func NewTensor(shape Shape, dt acl.DataType, p TensorPlacement) *Tensor {
	t := &Tensor{
		Shape:    StorageShape{Origin: shape, Storage: shape},
		Format:   StorageFormat{Origin: acl.FormatND, Storage: acl.FormatND},
		DataType: dt,
	}
	t.data.placement = p
	return t
}

// Data returns the tensor's data. It stays owned by the tensor.
func (t *Tensor) Data() *TensorData {
	if t == nil {
		return nil
	}
	return &t.data
}

// SetData moves src into the tensor (GE's SetData(TensorData&&)): the tensor's
// previous data is freed, src is left moved-from.
func (t *Tensor) SetData(src *TensorData) error {
	if t == nil {
		return acl.NilHandle("gert.Tensor.SetData", "tensor")
	}
	return t.data.MoveFrom(src)
}

// Addr returns the data address.
func (t *Tensor) Addr() (unsafe.Pointer, error) {
	if t == nil {
		return nil, acl.NilHandle("gert.Tensor.Addr", "tensor")
	}
	return t.data.Addr()
}

// Placement returns the data's placement.
func (t *Tensor) Placement() TensorPlacement {
	if t == nil {
		return 0
	}
	return t.data.placement
}

// SetPlacement sets the data's placement.
func (t *Tensor) SetPlacement(p TensorPlacement) {
	if t == nil {
		return
	}
	t.data.placement = p
}

// Size returns the bytes the tensor's data holds.
func (t *Tensor) Size() uint64 {
	if t == nil {
		return 0
	}
	return t.data.Size()
}

// Free frees the tensor's data.
func (t *Tensor) Free() error {
	if t == nil {
		return nil
	}
	return t.data.Free()
}

// SizeInBytes returns the bytes the storage shape needs in the tensor's data
// type (GE's GetSizeInBytes, without alignment).
func (t *Tensor) SizeInBytes() (uint64, error) {
	if t == nil {
		return 0, acl.NilHandle("gert.Tensor.SizeInBytes", "tensor")
	}
	return sizeInBytes(t.Shape.Storage, t.DataType)
}

// sizeInBytes returns the bytes a storage shape needs in data type dt.
func sizeInBytes(s Shape, dt acl.DataType) (uint64, error) {
	n, ok := s.NumElements()
	if !ok {
		return 0, fmt.Errorf("gert: storage shape %v has no size", s)
	}
	if !dt.Valid() {
		return 0, fmt.Errorf("gert: data type %v has no size", dt)
	}
	hi, lo := bits.Mul64(uint64(n), uint64(dt.Bits()))
	if hi != 0 || lo > math.MaxUint64-7 {
		return 0, fmt.Errorf("gert: %d elements of %v overflow a size", n, dt)
	}
	return (lo + 7) / 8, nil
}
