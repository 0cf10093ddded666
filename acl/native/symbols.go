package native

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
	numRuntimeSyms
)

// symInfo is the C name of a symbol and whether Open requires it.
type symInfo struct {
	name     string
	optional bool
}

// runtimeSyms lists the runtime symbols. Required are those every CANN
// release since the 5.x series exports; optional are the newer or
// deprecated ones (host registration appears only in recent runtimes,
// aclrtGetVersion is deprecated), whose absence makes the method return
// ACL_ERROR_API_NOT_SUPPORT.
var runtimeSyms = [numRuntimeSyms]symInfo{
	symInit:                         {"aclInit", false},
	symFinalize:                     {"aclFinalize", false},
	symSetDevice:                    {"aclrtSetDevice", false},
	symResetDevice:                  {"aclrtResetDevice", false},
	symGetDevice:                    {"aclrtGetDevice", false},
	symGetDeviceCount:               {"aclrtGetDeviceCount", false},
	symGetRunMode:                   {"aclrtGetRunMode", false},
	symCreateContext:                {"aclrtCreateContext", false},
	symDestroyContext:               {"aclrtDestroyContext", false},
	symSetCurrentContext:            {"aclrtSetCurrentContext", false},
	symGetCurrentContext:            {"aclrtGetCurrentContext", false},
	symCreateStream:                 {"aclrtCreateStream", false},
	symDestroyStream:                {"aclrtDestroyStream", false},
	symSynchronizeStream:            {"aclrtSynchronizeStream", false},
	symSynchronizeStreamWithTimeout: {"aclrtSynchronizeStreamWithTimeout", true},
	symCreateEvent:                  {"aclrtCreateEvent", false},
	symCreateEventWithFlag:          {"aclrtCreateEventWithFlag", true},
	symRecordEvent:                  {"aclrtRecordEvent", false},
	symSynchronizeEvent:             {"aclrtSynchronizeEvent", false},
	symStreamWaitEvent:              {"aclrtStreamWaitEvent", false},
	symEventElapsedTime:             {"aclrtEventElapsedTime", false},
	symDestroyEvent:                 {"aclrtDestroyEvent", false},
	symMalloc:                       {"aclrtMalloc", false},
	symFree:                         {"aclrtFree", false},
	symMallocHost:                   {"aclrtMallocHost", false},
	symFreeHost:                     {"aclrtFreeHost", false},
	symMemcpy:                       {"aclrtMemcpy", false},
	symMemcpyAsync:                  {"aclrtMemcpyAsync", false},
	symMemset:                       {"aclrtMemset", false},
	symMemsetAsync:                  {"aclrtMemsetAsync", false},
	symGetMemInfo:                   {"aclrtGetMemInfo", false},
	symHostRegister:                 {"aclrtHostRegister", true},
	symHostUnregister:               {"aclrtHostUnregister", true},
	symHostRegisterV2:               {"aclrtHostRegisterV2", true},
	symHostGetDevicePointer:         {"aclrtHostGetDevicePointer", true},
	symGetRecentErrMsg:              {"aclGetRecentErrMsg", true},
	symGetSocName:                   {"aclrtGetSocName", true},
	symGetVersion:                   {"aclrtGetVersion", true},
	// Not in the ABI reference's list of required functions: optional.
	symResetDeviceForce:        {"aclrtResetDeviceForce", true},
	symSetStreamFailureMode:    {"aclrtSetStreamFailureMode", true},
	symDeviceCanAccessPeer:     {"aclrtDeviceCanAccessPeer", true},
	symDeviceEnablePeerAccess:  {"aclrtDeviceEnablePeerAccess", true},
	symDeviceDisablePeerAccess: {"aclrtDeviceDisablePeerAccess", true},
}

// RequiredSymbols lists the C functions Open fails without, in table order.
func RequiredSymbols() []string {
	var out []string
	for _, s := range runtimeSyms {
		if !s.optional {
			out = append(out, s.name)
		}
	}
	return out
}

// OptionalSymbols lists the C functions whose absence only disables the
// method that calls them, in table order.
func OptionalSymbols() []string {
	var out []string
	for _, s := range runtimeSyms {
		if s.optional {
			out = append(out, s.name)
		}
	}
	return out
}
