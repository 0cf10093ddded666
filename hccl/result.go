package hccl

import "strconv"

// Result is an HcclResult: the status every HCCL function returns. The
// values are those of hccl_types.h; Result(0) is success. A plain value,
// safe to share.
type Result int32

// HcclResult values (hccl_types.h; EOOM from CANN 8.x/26.0, EInStatus from
// hcomm).
const (
	Success          Result = 0
	EPara            Result = 1  // parameter error
	EPtr             Result = 2  // empty pointer
	EMemory          Result = 3  // memory error
	EInternal        Result = 4  // internal error
	ENotSupport      Result = 5  // feature not supported
	ENotFound        Result = 6  // resource not found
	EUnavail         Result = 7  // resource unavailable
	ESyscall         Result = 8  // system call failed
	ETimeout         Result = 9  // timed out
	EOpenFileFailure Result = 10 // open file failed
	ETCPConnect      Result = 11 // TCP connect failed
	ERoCEConnect     Result = 12 // RoCE connect failed
	ETCPTransfer     Result = 13 // TCP transfer failed
	ERoCETransfer    Result = 14 // RoCE transfer failed
	ERuntime         Result = 15 // runtime API failed
	EDrv             Result = 16 // driver API failed
	EProfiling       Result = 17 // profiling API failed
	ECCE             Result = 18 // CCE API failed
	ENetwork         Result = 19 // network API failed
	EAgain           Result = 20 // try again
	ERemote          Result = 21 // error completion from the remote side
	ESuspending      Result = 22 // communicator suspending
	EOpRetryFail     Result = 23 // operation retry constraint
	EOOM             Result = 24 // out of memory
	EInStatus        Result = 1041
)

var resultNames = map[Result]string{
	Success:          "HCCL_SUCCESS",
	EPara:            "HCCL_E_PARA",
	EPtr:             "HCCL_E_PTR",
	EMemory:          "HCCL_E_MEMORY",
	EInternal:        "HCCL_E_INTERNAL",
	ENotSupport:      "HCCL_E_NOT_SUPPORT",
	ENotFound:        "HCCL_E_NOT_FOUND",
	EUnavail:         "HCCL_E_UNAVAIL",
	ESyscall:         "HCCL_E_SYSCALL",
	ETimeout:         "HCCL_E_TIMEOUT",
	EOpenFileFailure: "HCCL_E_OPEN_FILE_FAILURE",
	ETCPConnect:      "HCCL_E_TCP_CONNECT",
	ERoCEConnect:     "HCCL_E_ROCE_CONNECT",
	ETCPTransfer:     "HCCL_E_TCP_TRANSFER",
	ERoCETransfer:    "HCCL_E_ROCE_TRANSFER",
	ERuntime:         "HCCL_E_RUNTIME",
	EDrv:             "HCCL_E_DRV",
	EProfiling:       "HCCL_E_PROFILING",
	ECCE:             "HCCL_E_CCE",
	ENetwork:         "HCCL_E_NETWORK",
	EAgain:           "HCCL_E_AGAIN",
	ERemote:          "HCCL_E_REMOTE",
	ESuspending:      "HCCL_E_SUSPENDING",
	EOpRetryFail:     "HCCL_E_OPRETRY_FAIL",
	EOOM:             "HCCL_E_OOM",
	EInStatus:        "HCCL_E_IN_STATUS",
}

// String returns the C name of the result (HCCL_E_PARA, …) from a built-in
// table, so it prints without the library. Unknown values print as
// "HcclResult(N)".
func (r Result) String() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return "HcclResult(" + strconv.Itoa(int(r)) + ")"
}

// Known reports whether r is one of the values in the HCCL headers.
func (r Result) Known() bool {
	_, ok := resultNames[r]
	return ok
}

// Err returns nil for Success and an *Error for op otherwise; backends use it
// to turn a C return value into a Go error.
func (r Result) Err(op string) error {
	if r == Success {
		return nil
	}
	return &Error{Op: op, Code: r}
}

// Results returns every value in the built-in table, for tests and tools.
func Results() []Result {
	out := make([]Result, 0, len(resultNames))
	for r := range resultNames {
		out = append(out, r)
	}
	return out
}
