package engram

import (
	"strconv"

	"github.com/ascend-go/cann/hccl"
)

// DType is the element type of the table's rows.
type DType int

// Storage dtypes (elastic_buffer.py's engram_write and the fetch tiling
// accept exactly these: hicann/ops-transformer
// mc2/engram_fetch/op_host/op_tiling/arch35/engram_fetch_tiling.cpp @125200e0).
const (
	BF16 DType = iota + 1
	FP16
	FP32
	FP8E4M3 // float8_e4m3fn
	FP8E5M2
)

// Size is the element size in bytes, 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case BF16, FP16:
		return 2
	case FP32:
		return 4
	case FP8E4M3, FP8E5M2:
		return 1
	}
	return 0
}

// FP8 reports whether d is one of the 1-byte float8 types, the ones that
// carry scale factors.
func (d DType) FP8() bool { return d == FP8E4M3 || d == FP8E5M2 }

// HCCL is the matching HCCL data type.
func (d DType) HCCL() hccl.DataType {
	switch d {
	case BF16:
		return hccl.BFloat16
	case FP16:
		return hccl.Float16
	case FP32:
		return hccl.Float32
	case FP8E4M3:
		return hccl.Float8E4M3
	case FP8E5M2:
		return hccl.Float8E5M2
	}
	return hccl.DataTypeReserved
}

func (d DType) String() string {
	switch d {
	case BF16:
		return "bf16"
	case FP16:
		return "fp16"
	case FP32:
		return "fp32"
	case FP8E4M3:
		return "fp8_e4m3fn"
	case FP8E5M2:
		return "fp8_e5m2"
	}
	return "DType(" + strconv.Itoa(int(d)) + ")"
}

// DTypes lists every storage dtype.
func DTypes() []DType { return []DType{BF16, FP16, FP32, FP8E4M3, FP8E5M2} }

// SFType is the element type of the scale-factor table.
type SFType int

// Scale-factor dtypes: float32 or float8_e8m0fnu (elastic_buffer.py
// engram_write @125200e0).
const (
	SFNone SFType = iota
	SFFP32
	SFE8M0
)

// Size is the element size in bytes (0 for SFNone).
func (t SFType) Size() int {
	switch t {
	case SFFP32:
		return 4
	case SFE8M0:
		return 1
	}
	return 0
}

func (t SFType) String() string {
	switch t {
	case SFNone:
		return "none"
	case SFFP32:
		return "fp32"
	case SFE8M0:
		return "e8m0"
	}
	return "SFType(" + strconv.Itoa(int(t)) + ")"
}

// IndexPolicy says what a fetch does with an index outside [0, W·E).
type IndexPolicy int

const (
	// IndexError fails the fetch at Wait, naming the first bad index and
	// its position; nothing of the output is to be trusted.
	IndexError IndexPolicy = iota
	// IndexZeroFill makes those rows (and their scale factors) zeros; Wait
	// reports how many.
	IndexZeroFill
)

func (p IndexPolicy) String() string {
	switch p {
	case IndexError:
		return "error"
	case IndexZeroFill:
		return "zero-fill"
	}
	return "IndexPolicy(" + strconv.Itoa(int(p)) + ")"
}
