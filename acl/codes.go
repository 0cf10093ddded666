package acl

import "strconv"

// Code is an aclError: the int status every AscendCL function returns.
// The values are the ones in acl_base.h, rt_error_codes.h and
// ge_error_codes.h; Code(0) is success.
type Code int32

// General ACL codes (acl_base.h).
const (
	Success                    Code = 0
	CodeInvalidParam           Code = 100000
	CodeUninitialize           Code = 100001
	CodeRepeatInitialize       Code = 100002
	CodeInvalidFile            Code = 100003
	CodeInvalidFileSize        Code = 100005
	CodeParseFile              Code = 100006
	CodeInvalidModelID         Code = 100011
	CodeDeserializeModel       Code = 100012
	CodeParseModel             Code = 100013
	CodeReadModelFailure       Code = 100014
	CodeModelSizeInvalid       Code = 100015
	CodeModelInputNotMatch     Code = 100017
	CodeModelOutputNotMatch    Code = 100018
	CodeModelNotDynamic        Code = 100019
	CodeUnsupportedDataType    Code = 100026
	CodeFormatNotMatch         Code = 100027
	CodeRepeatFinalize         Code = 100037
	CodeBadAlloc               Code = 200000
	CodeAPINotSupport          Code = 200001
	CodeInvalidDevice          Code = 200002
	CodeMemoryAddressUnaligned Code = 200003
	CodeResourceNotMatch       Code = 200004
	CodeInvalidResourceHandle  Code = 200005
	CodeFeatureUnsupported     Code = 200006
	CodeStorageOverLimit       Code = 300000
	CodeInternalError          Code = 500000
	CodeFailure                Code = 500001
	CodeGEFailure              Code = 500002
	CodeRTFailure              Code = 500003
	CodeDrvFailure             Code = 500004
	CodeProfilingFailure       Code = 500005
)

// Runtime codes (error_codes/rt_error_codes.h).
const (
	CodeRTParamInvalid              Code = 107000
	CodeRTInvalidDeviceID           Code = 107001
	CodeRTContextNull               Code = 107002
	CodeRTStreamContext             Code = 107003
	CodeRTModelContext              Code = 107004
	CodeRTEventTimestampInvalid     Code = 107006
	CodeRTAddrUnaligned             Code = 107008
	CodeRTInvalidMemoryType         Code = 107016
	CodeRTInvalidHandle             Code = 107017
	CodeRTInvalidMallocType         Code = 107018
	CodeRTWaitTimeout               Code = 107019
	CodeRTTaskTimeout               Code = 107020
	CodeRTFeatureNotSupport         Code = 207000
	CodeRTMemoryAllocation          Code = 207001
	CodeRTMemoryFree                Code = 207002
	CodeRTNoDevice                  Code = 207004
	CodeRTResourceAllocFail         Code = 207005
	CodeRTNoEventResource           Code = 207007
	CodeRTNoStreamResource          Code = 207008
	CodeRTOverLimit                 Code = 207012
	CodeRTDeviceOOM                 Code = 207018
	CodeRTInternalError             Code = 507000
	CodeRTTSError                   Code = 507001
	CodeRTStreamTaskFull            Code = 507002
	CodeRTStreamNotComplete         Code = 507004
	CodeRTEventNotComplete          Code = 507006
	CodeRTContextReleaseError       Code = 507007
	CodeRTModelExecute              Code = 507011
	CodeRTSysDMA                    Code = 507013
	CodeRTAICoreTimeout             Code = 507014
	CodeRTAICoreException           Code = 507015
	CodeRTAICPUException            Code = 507018
	CodeRTStreamSyncTimeout         Code = 507046
	CodeRTEventSyncTimeout          Code = 507047
	CodeRTFftsPlusTimeout           Code = 507048 // HCCL tasks (FFTS+ on A2/A3) that hit HCCL_EXEC_TIMEOUT
	CodeRTDeviceMemError            Code = 507053
	CodeRTHBMMultiBitECCError       Code = 507054
	CodeRTDrvInternalError          Code = 507899
	CodeRTCommOpRetryFail           Code = 507904
	CodeHostMemoryAlreadyRegistered Code = 507910
	CodeHostMemoryNotRegistered     Code = 507911
)

// Graph engine codes (error_codes/ge_error_codes.h).
const (
	CodeGEParamInvalid             Code = 145000
	CodeGEExecNotInit              Code = 145001
	CodeGEExecModelPathInvalid     Code = 145002
	CodeGEExecModelIDInvalid       Code = 145003
	CodeGEExecModelDataSizeInvalid Code = 145006
	CodeGEExecModelAddrInvalid     Code = 145007
	// Dynamic batch (ge_error_codes.h): GeExecutor::SetDynamicBatchSize's
	// checks (hicann/ge runtime/v1/executor/ge_executor.cc:375-415).
	CodeGEDynamicInputAddrInvalid   Code = 145011
	CodeGEDynamicInputLengthInvalid Code = 145012
	CodeGEDynamicBatchSizeInvalid   Code = 145013
	CodeGEMemoryAllocation          Code = 245000
	CodeGEInternalError             Code = 545000
	CodeGELoadModel                 Code = 545001
	CodeGEModelExecuteTimeout       Code = 545601
)

var codeNames = map[Code]string{
	Success:                    "ACL_SUCCESS",
	CodeInvalidParam:           "ACL_ERROR_INVALID_PARAM",
	CodeUninitialize:           "ACL_ERROR_UNINITIALIZE",
	CodeRepeatInitialize:       "ACL_ERROR_REPEAT_INITIALIZE",
	CodeInvalidFile:            "ACL_ERROR_INVALID_FILE",
	CodeInvalidFileSize:        "ACL_ERROR_INVALID_FILE_SIZE",
	CodeParseFile:              "ACL_ERROR_PARSE_FILE",
	CodeInvalidModelID:         "ACL_ERROR_INVALID_MODEL_ID",
	CodeDeserializeModel:       "ACL_ERROR_DESERIALIZE_MODEL",
	CodeParseModel:             "ACL_ERROR_PARSE_MODEL",
	CodeReadModelFailure:       "ACL_ERROR_READ_MODEL_FAILURE",
	CodeModelSizeInvalid:       "ACL_ERROR_MODEL_SIZE_INVALID",
	CodeModelInputNotMatch:     "ACL_ERROR_MODEL_INPUT_NOT_MATCH",
	CodeModelOutputNotMatch:    "ACL_ERROR_MODEL_OUTPUT_NOT_MATCH",
	CodeModelNotDynamic:        "ACL_ERROR_MODEL_NOT_DYNAMIC",
	CodeUnsupportedDataType:    "ACL_ERROR_UNSUPPORTED_DATA_TYPE",
	CodeFormatNotMatch:         "ACL_ERROR_FORMAT_NOT_MATCH",
	CodeRepeatFinalize:         "ACL_ERROR_REPEAT_FINALIZE",
	CodeBadAlloc:               "ACL_ERROR_BAD_ALLOC",
	CodeAPINotSupport:          "ACL_ERROR_API_NOT_SUPPORT",
	CodeInvalidDevice:          "ACL_ERROR_INVALID_DEVICE",
	CodeMemoryAddressUnaligned: "ACL_ERROR_MEMORY_ADDRESS_UNALIGNED",
	CodeResourceNotMatch:       "ACL_ERROR_RESOURCE_NOT_MATCH",
	CodeInvalidResourceHandle:  "ACL_ERROR_INVALID_RESOURCE_HANDLE",
	CodeFeatureUnsupported:     "ACL_ERROR_FEATURE_UNSUPPORTED",
	CodeStorageOverLimit:       "ACL_ERROR_STORAGE_OVER_LIMIT",
	CodeInternalError:          "ACL_ERROR_INTERNAL_ERROR",
	CodeFailure:                "ACL_ERROR_FAILURE",
	CodeGEFailure:              "ACL_ERROR_GE_FAILURE",
	CodeRTFailure:              "ACL_ERROR_RT_FAILURE",
	CodeDrvFailure:             "ACL_ERROR_DRV_FAILURE",
	CodeProfilingFailure:       "ACL_ERROR_PROFILING_FAILURE",

	CodeRTParamInvalid:              "ACL_ERROR_RT_PARAM_INVALID",
	CodeRTInvalidDeviceID:           "ACL_ERROR_RT_INVALID_DEVICEID",
	CodeRTContextNull:               "ACL_ERROR_RT_CONTEXT_NULL",
	CodeRTStreamContext:             "ACL_ERROR_RT_STREAM_CONTEXT",
	CodeRTModelContext:              "ACL_ERROR_RT_MODEL_CONTEXT",
	CodeRTEventTimestampInvalid:     "ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID",
	CodeRTAddrUnaligned:             "ACL_ERROR_RT_ADDR_UNALIGNED",
	CodeRTInvalidMemoryType:         "ACL_ERROR_RT_INVALID_MEMORY_TYPE",
	CodeRTInvalidHandle:             "ACL_ERROR_RT_INVALID_HANDLE",
	CodeRTInvalidMallocType:         "ACL_ERROR_RT_INVALID_MALLOC_TYPE",
	CodeRTWaitTimeout:               "ACL_ERROR_RT_WAIT_TIMEOUT",
	CodeRTTaskTimeout:               "ACL_ERROR_RT_TASK_TIMEOUT",
	CodeRTFeatureNotSupport:         "ACL_ERROR_RT_FEATURE_NOT_SUPPORT",
	CodeRTMemoryAllocation:          "ACL_ERROR_RT_MEMORY_ALLOCATION",
	CodeRTMemoryFree:                "ACL_ERROR_RT_MEMORY_FREE",
	CodeRTNoDevice:                  "ACL_ERROR_RT_NO_DEVICE",
	CodeRTResourceAllocFail:         "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL",
	CodeRTNoEventResource:           "ACL_ERROR_RT_NO_EVENT_RESOURCE",
	CodeRTNoStreamResource:          "ACL_ERROR_RT_NO_STREAM_RESOURCE",
	CodeRTOverLimit:                 "ACL_ERROR_RT_OVER_LIMIT",
	CodeRTDeviceOOM:                 "ACL_ERROR_RT_DEVICE_OOM",
	CodeRTInternalError:             "ACL_ERROR_RT_INTERNAL_ERROR",
	CodeRTTSError:                   "ACL_ERROR_RT_TS_ERROR",
	CodeRTStreamTaskFull:            "ACL_ERROR_RT_STREAM_TASK_FULL",
	CodeRTStreamNotComplete:         "ACL_ERROR_RT_STREAM_NOT_COMPLETE",
	CodeRTEventNotComplete:          "ACL_ERROR_RT_EVENT_NOT_COMPLETE",
	CodeRTContextReleaseError:       "ACL_ERROR_RT_CONTEXT_RELEASE_ERROR",
	CodeRTModelExecute:              "ACL_ERROR_RT_MODEL_EXECUTE",
	CodeRTSysDMA:                    "ACL_ERROR_RT_SYS_DMA",
	CodeRTAICoreTimeout:             "ACL_ERROR_RT_AICORE_TIMEOUT",
	CodeRTAICoreException:           "ACL_ERROR_RT_AICORE_EXCEPTION",
	CodeRTAICPUException:            "ACL_ERROR_RT_AICPU_EXCEPTION",
	CodeRTStreamSyncTimeout:         "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT",
	CodeRTEventSyncTimeout:          "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT",
	CodeRTFftsPlusTimeout:           "ACL_ERROR_RT_FFTS_PLUS_TIMEOUT",
	CodeRTDeviceMemError:            "ACL_ERROR_RT_DEVICE_MEM_ERROR",
	CodeRTHBMMultiBitECCError:       "ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR",
	CodeRTDrvInternalError:          "ACL_ERROR_RT_DRV_INTERNAL_ERROR",
	CodeRTCommOpRetryFail:           "ACL_ERROR_RT_COMM_OP_RETRY_FAIL",
	CodeHostMemoryAlreadyRegistered: "ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
	CodeHostMemoryNotRegistered:     "ACL_ERROR_HOST_MEMORY_NOT_REGISTERED",

	CodeGEParamInvalid:              "ACL_ERROR_GE_PARAM_INVALID",
	CodeGEExecNotInit:               "ACL_ERROR_GE_EXEC_NOT_INIT",
	CodeGEExecModelPathInvalid:      "ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID",
	CodeGEExecModelIDInvalid:        "ACL_ERROR_GE_EXEC_MODEL_ID_INVALID",
	CodeGEExecModelDataSizeInvalid:  "ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID",
	CodeGEExecModelAddrInvalid:      "ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID",
	CodeGEDynamicInputAddrInvalid:   "ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID",
	CodeGEDynamicInputLengthInvalid: "ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID",
	CodeGEDynamicBatchSizeInvalid:   "ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID",
	CodeGEMemoryAllocation:          "ACL_ERROR_GE_MEMORY_ALLOCATION",
	CodeGEInternalError:             "ACL_ERROR_GE_INTERNAL_ERROR",
	CodeGELoadModel:                 "ACL_ERROR_GE_LOAD_MODEL",
	CodeGEModelExecuteTimeout:       "ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT",
}

// String returns the C name of the code (ACL_ERROR_BAD_ALLOC, …) from a
// built-in table, so it prints without any library loaded. Unknown codes
// print as "aclError(N)".
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return "aclError(" + strconv.Itoa(int(c)) + ")"
}

// Known reports whether c is one of the codes in the ACL headers.
func (c Code) Known() bool {
	_, ok := codeNames[c]
	return ok
}

// Codes returns every code in the built-in table, for tests and tools.
func Codes() []Code {
	out := make([]Code, 0, len(codeNames))
	for c := range codeNames {
		out = append(out, c)
	}
	return out
}
