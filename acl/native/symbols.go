package native

import "github.com/ascend-go/cann/internal/dl"

// sym indexes the symbol table of the runtime API.
type sym int

const (
	symInit sym = iota
	symFinalize
	symSetDevice
	symResetDevice
	symGetDevice
	symGetDeviceCount
	symGetRunMode
	symCreateContext
	symDestroyContext
	symSetCurrentContext
	symGetCurrentContext
	symCreateStream
	symDestroyStream
	symSynchronizeStream
	symSynchronizeStreamWithTimeout
	symCreateEvent
	symCreateEventWithFlag
	symRecordEvent
	symSynchronizeEvent
	symStreamWaitEvent
	symEventElapsedTime
	symDestroyEvent
	symMalloc
	symFree
	symMallocHost
	symFreeHost
	symMemcpy
	symMemcpyAsync
	symMemset
	symMemsetAsync
	symGetMemInfo
	symHostRegister
	symHostUnregister
	symHostRegisterV2
	symHostGetDevicePointer
	symGetRecentErrMsg
	symGetSocName
	symGetVersion
	symResetDeviceForce
	symSetStreamFailureMode
	symDeviceCanAccessPeer
	symDeviceEnablePeerAccess
	symDeviceDisablePeerAccess
	symResetEvent
	numRuntimeSyms
)

// runtimeSyms lists the runtime symbols. Required are those every CANN
// release since the 5.x series exports; optional are the newer or
// deprecated ones (host registration appears only in recent runtimes,
// aclrtGetVersion is deprecated), whose absence makes the method return
// ACL_ERROR_API_NOT_SUPPORT.
var runtimeSyms = [numRuntimeSyms]dl.Entry{
	symInit:                         {Name: "aclInit", Optional: false},
	symFinalize:                     {Name: "aclFinalize", Optional: false},
	symSetDevice:                    {Name: "aclrtSetDevice", Optional: false},
	symResetDevice:                  {Name: "aclrtResetDevice", Optional: false},
	symGetDevice:                    {Name: "aclrtGetDevice", Optional: false},
	symGetDeviceCount:               {Name: "aclrtGetDeviceCount", Optional: false},
	symGetRunMode:                   {Name: "aclrtGetRunMode", Optional: false},
	symCreateContext:                {Name: "aclrtCreateContext", Optional: false},
	symDestroyContext:               {Name: "aclrtDestroyContext", Optional: false},
	symSetCurrentContext:            {Name: "aclrtSetCurrentContext", Optional: false},
	symGetCurrentContext:            {Name: "aclrtGetCurrentContext", Optional: false},
	symCreateStream:                 {Name: "aclrtCreateStream", Optional: false},
	symDestroyStream:                {Name: "aclrtDestroyStream", Optional: false},
	symSynchronizeStream:            {Name: "aclrtSynchronizeStream", Optional: false},
	symSynchronizeStreamWithTimeout: {Name: "aclrtSynchronizeStreamWithTimeout", Optional: true},
	symCreateEvent:                  {Name: "aclrtCreateEvent", Optional: false},
	symCreateEventWithFlag:          {Name: "aclrtCreateEventWithFlag", Optional: true},
	symRecordEvent:                  {Name: "aclrtRecordEvent", Optional: false},
	symSynchronizeEvent:             {Name: "aclrtSynchronizeEvent", Optional: false},
	symStreamWaitEvent:              {Name: "aclrtStreamWaitEvent", Optional: false},
	symEventElapsedTime:             {Name: "aclrtEventElapsedTime", Optional: false},
	symDestroyEvent:                 {Name: "aclrtDestroyEvent", Optional: false},
	symMalloc:                       {Name: "aclrtMalloc", Optional: false},
	symFree:                         {Name: "aclrtFree", Optional: false},
	symMallocHost:                   {Name: "aclrtMallocHost", Optional: false},
	symFreeHost:                     {Name: "aclrtFreeHost", Optional: false},
	symMemcpy:                       {Name: "aclrtMemcpy", Optional: false},
	symMemcpyAsync:                  {Name: "aclrtMemcpyAsync", Optional: false},
	symMemset:                       {Name: "aclrtMemset", Optional: false},
	symMemsetAsync:                  {Name: "aclrtMemsetAsync", Optional: false},
	symGetMemInfo:                   {Name: "aclrtGetMemInfo", Optional: false},
	symHostRegister:                 {Name: "aclrtHostRegister", Optional: true},
	symHostUnregister:               {Name: "aclrtHostUnregister", Optional: true},
	symHostRegisterV2:               {Name: "aclrtHostRegisterV2", Optional: true},
	symHostGetDevicePointer:         {Name: "aclrtHostGetDevicePointer", Optional: true},
	symGetRecentErrMsg:              {Name: "aclGetRecentErrMsg", Optional: true},
	symGetSocName:                   {Name: "aclrtGetSocName", Optional: true},
	symGetVersion:                   {Name: "aclrtGetVersion", Optional: true},
	// Not in the ABI reference's list of required functions: optional.
	symResetDeviceForce:        {Name: "aclrtResetDeviceForce", Optional: true},
	symSetStreamFailureMode:    {Name: "aclrtSetStreamFailureMode", Optional: true},
	symDeviceCanAccessPeer:     {Name: "aclrtDeviceCanAccessPeer", Optional: true},
	symDeviceEnablePeerAccess:  {Name: "aclrtDeviceEnablePeerAccess", Optional: true},
	symDeviceDisablePeerAccess: {Name: "aclrtDeviceDisablePeerAccess", Optional: true},
	symResetEvent:              {Name: "aclrtResetEvent", Optional: true},
}

// RequiredSymbols lists the C functions Open fails without, in table order.
func RequiredSymbols() []string {
	var out []string
	for _, s := range runtimeSyms {
		if !s.Optional {
			out = append(out, s.Name)
		}
	}
	return out
}

// OptionalSymbols lists the C functions whose absence only disables the
// method that calls them, in table order.
func OptionalSymbols() []string {
	var out []string
	for _, s := range runtimeSyms {
		if s.Optional {
			out = append(out, s.Name)
		}
	}
	return out
}
