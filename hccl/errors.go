package hccl

import (
	"slices"

	"errors"
	"fmt"
	"github.com/ascend-go/cann/internal/callerr"
)

// Sentinel errors. An *Error matches (errors.Is) the sentinel of its code's
// class, so callers test the meaning of a failure without listing codes.
var (
	ErrPara         = errors.New("hccl: invalid parameter")
	ErrPtr          = errors.New("hccl: null pointer")
	ErrMemory       = errors.New("hccl: memory error")
	ErrInternal     = errors.New("hccl: internal error")
	ErrNotSupported = errors.New("hccl: not supported")
	ErrNotFound     = errors.New("hccl: resource not found")
	ErrUnavailable  = errors.New("hccl: resource unavailable")
	ErrSystem       = errors.New("hccl: system, runtime or driver call failed")
	ErrTimeout      = errors.New("hccl: timed out")
	ErrNetwork      = errors.New("hccl: network failure")
	ErrAgain        = errors.New("hccl: try again")
	ErrRemote       = errors.New("hccl: remote side failed")
	ErrSuspended    = errors.New("hccl: communicator suspended")
	ErrInStatus     = errors.New("hccl: error held in the communicator status")
)

var resultClass = map[Result]error{
	EPara:            ErrPara,
	EPtr:             ErrPtr,
	EMemory:          ErrMemory,
	EOOM:             ErrMemory,
	EInternal:        ErrInternal,
	ENotSupport:      ErrNotSupported,
	ENotFound:        ErrNotFound,
	EUnavail:         ErrUnavailable,
	ESyscall:         ErrSystem,
	EOpenFileFailure: ErrSystem,
	ERuntime:         ErrSystem,
	EDrv:             ErrSystem,
	EProfiling:       ErrSystem,
	ECCE:             ErrSystem,
	ETimeout:         ErrTimeout,
	ETCPConnect:      ErrNetwork,
	ERoCEConnect:     ErrNetwork,
	ETCPTransfer:     ErrNetwork,
	ERoCETransfer:    ErrNetwork,
	ENetwork:         ErrNetwork,
	EAgain:           ErrAgain,
	ERemote:          ErrRemote,
	ESuspending:      ErrSuspended,
	EOpRetryFail:     ErrSuspended,
	EInStatus:        ErrInStatus,
}

// Error is a failed HCCL call: the C function (Op, e.g. "HcclAllReduce"),
// its HcclResult and, where the backend knows more, a message. It is an
// immutable value, safe to share between goroutines.
type Error struct {
	Op   string
	Code Result
	Msg  string
	// Err is the cause beside the code, nil when the failure is HCCL's
	// own; a wait for peers that the caller's context ended carries
	// ctx.Err() here, so errors.Is matches both the code's sentinel and
	// context.DeadlineExceeded or context.Canceled.
	Err error
}

// Unwrap returns the cause (Err).
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// NilHandle is the error of a call on, or given, a nil handle (what names
// it) in the HCCL packages: HCCL_E_PTR, the code HCCL's own checks give a
// NULL communicator, root info or other pointer (hicann/hccl
// op_base.cc:2028, op_base_hccl.cc:68-83; docs/misuse.md).
func NilHandle(op, what string) *Error {
	return &Error{Op: op, Code: EPtr, Msg: "nil " + what}
}

// Errorf builds an *Error with a formatted message. An argument that is an
// *Error with the same code is formatted without its code ("Op: message"),
// so that a message never repeats the code it is reported under.
func Errorf(op string, code Result, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, uncoded(code, args)...)}
}

// uncoded returns args with every *Error of code replaced by its code-free
// text; args itself (possibly the caller's slice) is not modified.
func uncoded(code Result, args []any) []any {
	out, cloned := args, false
	for i, a := range args {
		if e, ok := a.(*Error); ok && e != nil && e.Code == code {
			if !cloned {
				out, cloned = slices.Clone(args), true
			}
			out[i] = callerr.Uncoded(e.Op, e.Msg)
		}
	}
	return out
}

// Error formats as "Op: HCCL_E_PARA (1): message".
func (e *Error) Error() string {
	if e == nil {
		return "<nil *hccl.Error>"
	}
	return callerr.Message(e.Op, e.Code.String(), int64(e.Code), e.Code.Known(), e.Msg)
}

// Is reports whether target is the sentinel of e's class, or an *Error with
// the same code (and the same Op when target names one).
func (e *Error) Is(target error) bool {
	if e == nil {
		return false
	}
	if t, ok := target.(*Error); ok {
		return t.Code == e.Code && (t.Op == "" || t.Op == e.Op)
	}
	return target != nil && resultClass[e.Code] == target
}

// ResultOf returns the HcclResult carried by err: Success for nil, the code
// of an *Error in its chain, and EInternal for any other error.
func ResultOf(err error) Result {
	if err == nil {
		return Success
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}
