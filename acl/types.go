package acl

import "strconv"

// DataType is aclDataType.
type DataType int32

// aclDataType values.
const (
	DTUndefined  DataType = -1
	Float32      DataType = 0
	Float16      DataType = 1
	Int8         DataType = 2
	Int32        DataType = 3
	Uint8        DataType = 4
	Int16        DataType = 6
	Uint16       DataType = 7
	Uint32       DataType = 8
	Int64        DataType = 9
	Uint64       DataType = 10
	Float64      DataType = 11
	Bool         DataType = 12
	String       DataType = 13
	Complex64    DataType = 16
	Complex128   DataType = 17
	BFloat16     DataType = 27
	Int4         DataType = 29
	Uint1        DataType = 30
	Complex32    DataType = 33
	HiFloat8     DataType = 34
	Float8E5M2   DataType = 35
	Float8E4M3FN DataType = 36
	Float8E8M0   DataType = 37
	Float6E3M2   DataType = 38
	Float6E2M3   DataType = 39
	Float4E2M1   DataType = 40
	Float4E1M2   DataType = 41
)

var dataTypeInfo = map[DataType]struct {
	name string
	bits int
}{
	DTUndefined: {"ACL_DT_UNDEFINED", 0}, Float32: {"ACL_FLOAT", 32}, Float16: {"ACL_FLOAT16", 16},
	Int8: {"ACL_INT8", 8}, Int32: {"ACL_INT32", 32}, Uint8: {"ACL_UINT8", 8}, Int16: {"ACL_INT16", 16},
	Uint16: {"ACL_UINT16", 16}, Uint32: {"ACL_UINT32", 32}, Int64: {"ACL_INT64", 64}, Uint64: {"ACL_UINT64", 64},
	Float64: {"ACL_DOUBLE", 64}, Bool: {"ACL_BOOL", 8}, String: {"ACL_STRING", 0}, Complex64: {"ACL_COMPLEX64", 64},
	Complex128: {"ACL_COMPLEX128", 128}, BFloat16: {"ACL_BF16", 16}, Int4: {"ACL_INT4", 4}, Uint1: {"ACL_UINT1", 1},
	Complex32: {"ACL_COMPLEX32", 32}, HiFloat8: {"ACL_HIFLOAT8", 8}, Float8E5M2: {"ACL_FLOAT8_E5M2", 8},
	Float8E4M3FN: {"ACL_FLOAT8_E4M3FN", 8}, Float8E8M0: {"ACL_FLOAT8_E8M0", 8}, Float6E3M2: {"ACL_FLOAT6_E3M2", 6},
	Float6E2M3: {"ACL_FLOAT6_E2M3", 6}, Float4E2M1: {"ACL_FLOAT4_E2M1", 4}, Float4E1M2: {"ACL_FLOAT4_E1M2", 4},
}

// String returns the ACL_* name of the data type ("aclDataType(n)" for an
// unknown one).
func (d DataType) String() string {
	if i, ok := dataTypeInfo[d]; ok {
		return i.name
	}
	return "aclDataType(" + strconv.Itoa(int(d)) + ")"
}

// Valid reports whether d is a defined aclDataType.
func (d DataType) Valid() bool { _, ok := dataTypeInfo[d]; return ok }

// Bits is the storage width of one element in bits (0 for undefined and
// string types).
func (d DataType) Bits() int { return dataTypeInfo[d].bits }

// Size is the storage size of one element in bytes (aclDataTypeSize); types
// narrower than a byte report 1, undefined and string types 0.
func (d DataType) Size() int {
	b := d.Bits()
	if b == 0 {
		return 0
	}
	return (b + 7) / 8
}

// Format is aclFormat.
type Format int32

// aclFormat values. 50-54 are the FRACTAL_NZ layouts with an explicit C0
// (ACL_FORMAT_FRACTAL_NZ_C0_16 ... _C0_8), as enum aclFormat in
// hicann/runtime include/external/acl/acl_base_rt.h (commit 31e824c9) names
// them.
const (
	FormatUndefined     Format = -1
	FormatNCHW          Format = 0
	FormatNHWC          Format = 1
	FormatND            Format = 2
	FormatNC1HWC0       Format = 3
	FormatFractalZ      Format = 4
	FormatNC1HWC0C04    Format = 12
	FormatHWCN          Format = 16
	FormatNDHWC         Format = 27
	FormatFractalNZ     Format = 29
	FormatNCDHW         Format = 30
	FormatNDC1HWC0      Format = 32
	FormatFractalZ3D    Format = 33
	FormatNC            Format = 35
	FormatNCL           Format = 47
	FormatFractalNZC016 Format = 50
	FormatFractalNZC032 Format = 51
	FormatFractalNZC02  Format = 52
	FormatFractalNZC04  Format = 53
	FormatFractalNZC08  Format = 54
)

var formatNames = map[Format]string{
	FormatUndefined: "ACL_FORMAT_UNDEFINED", FormatNCHW: "ACL_FORMAT_NCHW", FormatNHWC: "ACL_FORMAT_NHWC",
	FormatND: "ACL_FORMAT_ND", FormatNC1HWC0: "ACL_FORMAT_NC1HWC0", FormatFractalZ: "ACL_FORMAT_FRACTAL_Z",
	FormatNC1HWC0C04: "ACL_FORMAT_NC1HWC0_C04", FormatHWCN: "ACL_FORMAT_HWCN", FormatNDHWC: "ACL_FORMAT_NDHWC",
	FormatFractalNZ: "ACL_FORMAT_FRACTAL_NZ", FormatNCDHW: "ACL_FORMAT_NCDHW", FormatNDC1HWC0: "ACL_FORMAT_NDC1HWC0",
	FormatFractalZ3D: "ACL_FRACTAL_Z_3D", FormatNC: "ACL_FORMAT_NC", FormatNCL: "ACL_FORMAT_NCL",
	FormatFractalNZC016: "ACL_FORMAT_FRACTAL_NZ_C0_16", FormatFractalNZC032: "ACL_FORMAT_FRACTAL_NZ_C0_32", FormatFractalNZC02: "ACL_FORMAT_FRACTAL_NZ_C0_2",
	FormatFractalNZC04: "ACL_FORMAT_FRACTAL_NZ_C0_4", FormatFractalNZC08: "ACL_FORMAT_FRACTAL_NZ_C0_8",
}

// String returns the ACL_FORMAT_* name of the format.
func (f Format) String() string {
	if n, ok := formatNames[f]; ok {
		return n
	}
	return "aclFormat(" + strconv.Itoa(int(f)) + ")"
}

// Valid reports whether f is a defined aclFormat.
func (f Format) Valid() bool { _, ok := formatNames[f]; return ok }

// MemcpyKind is aclrtMemcpyKind.
type MemcpyKind int32

// aclrtMemcpyKind values.
const (
	MemcpyHostToHost          MemcpyKind = 0
	MemcpyHostToDevice        MemcpyKind = 1
	MemcpyDeviceToHost        MemcpyKind = 2
	MemcpyDeviceToDevice      MemcpyKind = 3
	MemcpyDefault             MemcpyKind = 4
	MemcpyHostToBufToDevice   MemcpyKind = 5
	MemcpyInnerDeviceToDevice MemcpyKind = 6
	MemcpyInterDeviceToDevice MemcpyKind = 7
)

var memcpyKindNames = [...]string{
	"ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_DEVICE_TO_HOST",
	"ACL_MEMCPY_DEVICE_TO_DEVICE", "ACL_MEMCPY_DEFAULT", "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
	"ACL_MEMCPY_INNER_DEVICE_TO_DEVICE", "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE",
}

// String returns the ACL_MEMCPY_* name of the copy kind.
func (k MemcpyKind) String() string {
	if k >= 0 && int(k) < len(memcpyKindNames) {
		return memcpyKindNames[k]
	}
	return "aclrtMemcpyKind(" + strconv.Itoa(int(k)) + ")"
}

// Valid reports whether k is a defined aclrtMemcpyKind.
func (k MemcpyKind) Valid() bool { return k >= 0 && int(k) < len(memcpyKindNames) }

// MemMallocPolicy is aclrtMemMallocPolicy: a base policy in the low byte,
// optionally ORed with the Mem* modifier bits.
type MemMallocPolicy uint32

// aclrtMemMallocPolicy base values.
const (
	MemMallocHugeFirst     MemMallocPolicy = 0
	MemMallocHugeOnly      MemMallocPolicy = 1
	MemMallocNormalOnly    MemMallocPolicy = 2
	MemMallocHugeFirstP2P  MemMallocPolicy = 3
	MemMallocHugeOnlyP2P   MemMallocPolicy = 4
	MemMallocNormalOnlyP2P MemMallocPolicy = 5
	MemMallocHuge1GOnly    MemMallocPolicy = 6
	MemMallocHuge1GOnlyP2P MemMallocPolicy = 7
)

// Modifier bits ORed into a MemMallocPolicy.
const (
	MemTypeLowBandWidth        MemMallocPolicy = 0x0100
	MemTypeHighBandWidth       MemMallocPolicy = 0x1000
	MemAccessUserSpaceReadOnly MemMallocPolicy = 0x100000
)

const policyModifiers = MemTypeLowBandWidth | MemTypeHighBandWidth | MemAccessUserSpaceReadOnly

// Base returns the policy without modifier bits.
func (p MemMallocPolicy) Base() MemMallocPolicy { return p &^ policyModifiers }

// Valid reports whether the base policy is defined and no unknown bit is set.
func (p MemMallocPolicy) Valid() bool { return p.Base() <= MemMallocHuge1GOnlyP2P }

// MemAttr is aclrtMemAttr, the memory kind queried by GetMemInfo.
type MemAttr int32

// aclrtMemAttr values.
const (
	DDRMem          MemAttr = 0
	HBMMem          MemAttr = 1
	DDRMemHuge      MemAttr = 2
	DDRMemNormal    MemAttr = 3
	HBMMemHuge      MemAttr = 4
	HBMMemNormal    MemAttr = 5
	DDRMemP2PHuge   MemAttr = 6
	DDRMemP2PNormal MemAttr = 7
	HBMMemP2PHuge   MemAttr = 8
	HBMMemP2PNormal MemAttr = 9
	HBMMemHuge1G    MemAttr = 10
	HBMMemP2PHuge1G MemAttr = 11
	MemNormal       MemAttr = 12
	MemHuge         MemAttr = 13
	MemHuge1G       MemAttr = 14
	MemP2PNormal    MemAttr = 15
	MemP2PHuge      MemAttr = 16
	MemP2PHuge1G    MemAttr = 17
)

// Valid reports whether a is a defined aclrtMemAttr.
func (a MemAttr) Valid() bool { return a >= DDRMem && a <= MemP2PHuge1G }

// RunMode is aclrtRunMode.
type RunMode int32

// aclrtRunMode values.
const (
	RunModeDevice RunMode = 0
	RunModeHost   RunMode = 1
)

// String returns the ACL_* name of the run mode.
func (m RunMode) String() string {
	switch m {
	case RunModeDevice:
		return "ACL_DEVICE"
	case RunModeHost:
		return "ACL_HOST"
	}
	return "aclrtRunMode(" + strconv.Itoa(int(m)) + ")"
}

// HostRegisterType is aclrtHostRegisterType (aclrtHostRegister).
type HostRegisterType uint32

// aclrtHostRegisterType values.
const (
	HostRegisterMapped   HostRegisterType = 0
	HostRegisterIOMemory HostRegisterType = 0x04
	HostRegisterReadOnly HostRegisterType = 0x08
)

// HostRegFlag holds the ACL_HOST_REG_* flags of aclrtHostRegisterV2.
type HostRegFlag uint32

// aclrtHostRegisterV2 flags.
const (
	HostRegMapped   HostRegFlag = 0x2
	HostRegIOMemory HostRegFlag = 0x4
	HostRegReadOnly HostRegFlag = 0x8
	HostRegPinned   HostRegFlag = 0x10000000
)

// EventFlag holds the flags of aclrtCreateEventWithFlag.
type EventFlag uint32

// aclrtCreateEventWithFlag flags.
const (
	EventSync     EventFlag = 0x1
	EventTimeLine EventFlag = 0x8
)

// Handles are the C opaque pointers (aclrtContext, aclrtStream, aclrtEvent).
// They are values only a backend can interpret; zero is the null handle.
type (
	ContextHandle uintptr
	StreamHandle  uintptr
	EventHandle   uintptr
)

// StreamFailureMode is the mode of aclrtSetStreamFailureMode (a uint64_t;
// the runtime reads bit 0 only).
type StreamFailureMode uint64

// aclrtSetStreamFailureMode modes (acl_rt.h).
const (
	// ContinueOnFailure (ACL_CONTINUE_ON_FAILURE), the default: after a
	// failed task the stream runs the next ones; the next synchronize
	// reports the failure.
	ContinueOnFailure StreamFailureMode = 0
	// StopOnFailure (ACL_STOP_ON_FAILURE): the first failed task on any
	// stream of the context stops the context: later tasks are skipped,
	// new ones refused, every synchronize reports the failure.
	StopOnFailure StreamFailureMode = 1
)
