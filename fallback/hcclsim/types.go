package hcclsim

import (
	"fmt"

	"github.com/ascend-go/cann/hccl"
)

// dtype mirrors HcclDataType: the values are the C enum values, so the
// adapter converts with a plain type conversion.
type dtype uint32

const (
	dtInt8    dtype = 0
	dtInt16   dtype = 1
	dtInt32   dtype = 2
	dtFP16    dtype = 3
	dtFP32    dtype = 4
	dtInt64   dtype = 5
	dtUint64  dtype = 6
	dtUint8   dtype = 7
	dtUint16  dtype = 8
	dtUint32  dtype = 9
	dtFP64    dtype = 10
	dtBF16    dtype = 11
	dtInt128  dtype = 12
	dtHIF8    dtype = 14
	dtFP8E4M3 dtype = 15
	dtFP8E5M2 dtype = 16
	dtFP8E8M0 dtype = 17
)

// size returns the element size in bytes, 0 for a value that is not a data
// type.
func (d dtype) size() uint64 {
	switch d {
	case dtInt8, dtUint8, dtHIF8, dtFP8E4M3, dtFP8E5M2, dtFP8E8M0:
		return 1
	case dtInt16, dtUint16, dtFP16, dtBF16:
		return 2
	case dtInt32, dtUint32, dtFP32:
		return 4
	case dtInt64, dtUint64, dtFP64:
		return 8
	case dtInt128:
		return 16
	}
	return 0
}

// reducible reports whether HCCL reduces d: int8/16/32/64, fp16, bf16 and
// fp32. The unsigned types and fp64 are refused (HCCL_E_NOT_SUPPORT; hcomm
// legacy hccl_communicator_host.cc:1002-1006), int128 and the 8-bit
// floats move as bytes but are not reduced. The kernels (reduce.go) cover
// more types than this, for the model's collectives.
func (d dtype) reducible() bool {
	switch d {
	case dtInt8, dtInt16, dtInt32, dtInt64, dtFP16, dtBF16, dtFP32:
		return true
	}
	return false
}

// reducibleBy adds the operation: PROD of int16 and bf16 is refused on
// A2/A3 (param_check.cc:327-345, HcomCheckReduceDataType).
func (d dtype) reducibleBy(op redOp) bool {
	return d.reducible() && !(op == opProd && (d == dtInt16 || d == dtBF16))
}

func (d dtype) String() string {
	names := map[dtype]string{
		dtInt8: "INT8", dtInt16: "INT16", dtInt32: "INT32", dtFP16: "FP16", dtFP32: "FP32",
		dtInt64: "INT64", dtUint64: "UINT64", dtUint8: "UINT8", dtUint16: "UINT16", dtUint32: "UINT32",
		dtFP64: "FP64", dtBF16: "BFP16", dtInt128: "INT128", dtHIF8: "HIF8",
		dtFP8E4M3: "FP8E4M3", dtFP8E5M2: "FP8E5M2", dtFP8E8M0: "FP8E8M0",
	}
	if s, ok := names[d]; ok {
		return s
	}
	return fmt.Sprintf("dtype(%d)", uint32(d))
}

// redOp mirrors HcclReduceOp.
type redOp uint32

const (
	opSum  redOp = 0
	opProd redOp = 1
	opMax  redOp = 2
	opMin  redOp = 3
)

func (o redOp) String() string {
	switch o {
	case opSum:
		return "SUM"
	case opProd:
		return "PROD"
	case opMax:
		return "MAX"
	case opMin:
		return "MIN"
	}
	return fmt.Sprintf("op(%d)", uint32(o))
}

// code mirrors HcclResult; the adapter converts it to hccl.Result.
type code int32

const (
	codeSuccess    code = 0
	codePara       code = 1
	codePtr        code = 2
	codeMemory     code = 3
	codeInternal   code = 4
	codeNotSupport code = 5
	codeNotFound   code = 6
	codeUnavail    code = 7
	codeSyscall    code = 8
	codeTimeout    code = 9
	codeTCPConnect code = 11
	codeTCPXfer    code = 13
	codeRemote     code = 21
)

// simError is a failure inside the simulator: an HCCL result code and a
// message saying what disagreed or which rank was lost. The adapter turns it
// into an *hccl.Error naming the C function.
type simError struct {
	code code
	msg  string
}

// Error names the code as HCCL does (HCCL_E_REMOTE), never as a bare number:
// this text reaches users inside the stream error of a failed HCCL task.
func (e *simError) Error() string { return hccl.Result(e.code).String() + ": " + e.msg }

func errf(c code, format string, args ...any) *simError {
	return &simError{code: c, msg: fmt.Sprintf(format, args...)}
}

// codeOf returns the HCCL code an error carries (codeInternal for a foreign
// error).
func codeOf(err error) code {
	if err == nil {
		return codeSuccess
	}
	if e, ok := err.(*simError); ok {
		return e.code
	}
	return codeInternal
}
