package acl

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ascend-go/cann/internal/callerr"
)

// Sentinel errors. An *Error matches (errors.Is) every sentinel whose class
// its code belongs to, so callers can test the meaning of a failure without
// listing codes from the three header ranges.
var (
	ErrInvalidParam   = errors.New("acl: invalid parameter")
	ErrUninitialized  = errors.New("acl: not initialized")
	ErrRepeatInit     = errors.New("acl: already initialized")
	ErrRepeatFinalize = errors.New("acl: already finalized")
	ErrBadAlloc       = errors.New("acl: memory allocation failed")
	ErrNotSupported   = errors.New("acl: not supported")
	ErrInvalidDevice  = errors.New("acl: invalid device")
	ErrInvalidHandle  = errors.New("acl: invalid handle")
	ErrContext        = errors.New("acl: no or wrong current context")
	ErrTimeout        = errors.New("acl: timed out")
	ErrInvalidModelID = errors.New("acl: invalid model id")
	ErrInvalidModel   = errors.New("acl: invalid model")
	ErrMemoryFree     = errors.New("acl: memory free failed")
	ErrStreamTask     = errors.New("acl: stream task failed")
	ErrRegistered     = errors.New("acl: host memory registration state")
)

// classes maps each sentinel to the codes that carry its meaning.
var classes = map[error][]Code{
	ErrInvalidParam: {CodeInvalidParam, CodeRTParamInvalid, CodeGEParamInvalid, CodeGEExecModelDataSizeInvalid, CodeGEExecModelAddrInvalid,
		CodeGEDynamicInputAddrInvalid, CodeGEDynamicInputLengthInvalid, CodeGEDynamicBatchSizeInvalid},
	ErrUninitialized:  {CodeUninitialize, CodeGEExecNotInit},
	ErrRepeatInit:     {CodeRepeatInitialize},
	ErrRepeatFinalize: {CodeRepeatFinalize},
	ErrBadAlloc:       {CodeBadAlloc, CodeRTMemoryAllocation, CodeRTDeviceOOM, CodeGEMemoryAllocation, CodeRTResourceAllocFail, CodeRTNoEventResource, CodeRTNoStreamResource},
	ErrNotSupported:   {CodeAPINotSupport, CodeFeatureUnsupported, CodeRTFeatureNotSupport},
	ErrInvalidDevice:  {CodeInvalidDevice, CodeRTInvalidDeviceID, CodeRTNoDevice, CodeRTContextReleaseError},
	ErrInvalidHandle:  {CodeInvalidResourceHandle, CodeRTInvalidHandle},
	ErrContext:        {CodeRTContextNull, CodeRTStreamContext, CodeRTModelContext},
	ErrTimeout:        {CodeRTWaitTimeout, CodeRTTaskTimeout, CodeRTStreamSyncTimeout, CodeRTEventSyncTimeout, CodeRTFftsPlusTimeout, CodeGEModelExecuteTimeout, CodeRTAICoreTimeout},
	ErrInvalidModelID: {CodeInvalidModelID, CodeGEExecModelIDInvalid},
	ErrInvalidModel:   {CodeGEExecModelPathInvalid, CodeInvalidFile, CodeInvalidFileSize, CodeParseFile, CodeDeserializeModel, CodeParseModel, CodeReadModelFailure, CodeModelSizeInvalid, CodeGELoadModel},
	ErrMemoryFree:     {CodeRTMemoryFree},
	ErrStreamTask:     {CodeRTModelExecute, CodeRTAICoreException, CodeRTAICPUException, CodeRTTSError, CodeRTStreamTaskFull},
	ErrRegistered:     {CodeHostMemoryAlreadyRegistered, CodeHostMemoryNotRegistered},
}

var codeClass = func() map[Code][]error {
	m := make(map[Code][]error)
	for s, codes := range classes {
		for _, c := range codes {
			m[c] = append(m[c], s)
		}
	}
	return m
}()

// Error is a failed AscendCL call: the C function (Op), the aclError code and,
// where the backend has it, the text of aclGetRecentErrMsg read on the same
// OS thread right after the failure.
type Error struct {
	Op   string
	Code Code
	Msg  string
	// Cause is the error of another layer this one reports, when there is
	// one: the fallback's load of an ONNX model keeps the *onnx.Error, so
	// that errors.As and errors.Is reach it through the *Error. Msg
	// already carries its text.
	Cause error
}

// Unwrap returns Cause.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Cause
}

// Errorf builds an *Error with a formatted message. An argument that is an
// *Error with the same code is formatted without its code ("Op: message"),
// so that a message never repeats the code it is reported under.
func Errorf(op string, code Code, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, uncoded(code, args)...)}
}

// uncoded returns args with every *Error of code replaced by its code-free
// text; args itself (possibly the caller's slice) is not modified.
func uncoded(code Code, args []any) []any {
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

// Error formats as "Op: ACL_ERROR_NAME (code): message".
func (e *Error) Error() string {
	if e == nil {
		return "<nil *acl.Error>"
	}
	return callerr.Message(e.Op, e.Code.String(), int64(e.Code), e.Code.Known(), e.Msg)
}

// Is reports whether target is a sentinel of e's class, or an *Error with the
// same code (errors.Is(err, &acl.Error{Code: acl.CodeBadAlloc})).
func (e *Error) Is(target error) bool {
	if e == nil {
		return false
	}
	if t, ok := target.(*Error); ok {
		return t.Code == e.Code && (t.Op == "" || t.Op == e.Op)
	}
	for _, s := range codeClass[e.Code] {
		if s == target {
			return true
		}
	}
	return false
}

// CodeOf returns the aclError code carried by err, Success for nil and
// CodeFailure for an error that carries none.
func CodeOf(err error) Code {
	if err == nil {
		return Success
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeFailure
}
