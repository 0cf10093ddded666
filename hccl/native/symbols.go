package native

// sym indexes the symbol table.
type sym int

const (
	symGetRootInfo sym = iota
	symCommInitRootInfo
	symCommInitRootInfoConfig
	symCommInitClusterInfo
	symCommInitAll
	symCommDestroy
	symGetRankSize
	symGetRankId
	symGetCommName
	symGetCommAsyncError
	symGetErrorString
	symBarrier
	symAllReduce
	symBroadcast
	symAllGather
	symReduceScatter
	symAlltoAllV
	symSend
	symRecv
	symBatchSendRecv
	symRegisterMem
	symDeregisterMem
	symExchangeMemDesc
	symEnableMemAccess
	symDisableMemAccess
	symBatchGet
	symBatchPut
	symCommRegister
	symCommDeregister
	symCommExchangeMem
	numSyms
)

// symInfo is the C name of a symbol and whether Open requires it.
type symInfo struct {
	name     string
	optional bool
}

// syms lists every bound function. Required are the ones every CANN
// release since the 5.x series exports. HcclBarrier and
// HcclCommInitRootInfoConfig are absent from older headers, HcclGetCommName
// and HcclCommInitAll from some builds, and the one-sided service and window
// functions live in headers the vendor may change.
var syms = [numSyms]symInfo{
	symGetRootInfo:            {"HcclGetRootInfo", false},
	symCommInitRootInfo:       {"HcclCommInitRootInfo", false},
	symCommInitRootInfoConfig: {"HcclCommInitRootInfoConfig", true},
	symCommInitClusterInfo:    {"HcclCommInitClusterInfo", false},
	symCommInitAll:            {"HcclCommInitAll", true},
	symCommDestroy:            {"HcclCommDestroy", false},
	symGetRankSize:            {"HcclGetRankSize", false},
	symGetRankId:              {"HcclGetRankId", false},
	symGetCommName:            {"HcclGetCommName", true},
	symGetCommAsyncError:      {"HcclGetCommAsyncError", true},
	symGetErrorString:         {"HcclGetErrorString", true},
	symBarrier:                {"HcclBarrier", true},
	symAllReduce:              {"HcclAllReduce", false},
	symBroadcast:              {"HcclBroadcast", false},
	symAllGather:              {"HcclAllGather", false},
	symReduceScatter:          {"HcclReduceScatter", false},
	symAlltoAllV:              {"HcclAlltoAllV", true},
	symSend:                   {"HcclSend", false},
	symRecv:                   {"HcclRecv", false},
	symBatchSendRecv:          {"HcclBatchSendRecv", true},
	symRegisterMem:            {"HcclRegisterMem", true},
	symDeregisterMem:          {"HcclDeregisterMem", true},
	symExchangeMemDesc:        {"HcclExchangeMemDesc", true},
	symEnableMemAccess:        {"HcclEnableMemAccess", true},
	symDisableMemAccess:       {"HcclDisableMemAccess", true},
	symBatchGet:               {"HcclBatchGet", true},
	symBatchPut:               {"HcclBatchPut", true},
	symCommRegister:           {"HcclCommRegister", true},
	symCommDeregister:         {"HcclCommDeregister", true},
	symCommExchangeMem:        {"HcclCommExchangeMem", true},
}

// RequiredSymbols lists the C functions Open fails without, in table order.
func RequiredSymbols() []string { return symNames(false) }

// OptionalSymbols lists the C functions whose absence only makes the method
// that calls them return an error matching hccl.ErrNotSupported, in table
// order.
func OptionalSymbols() []string { return symNames(true) }

func symNames(optional bool) []string {
	var out []string
	for _, s := range syms {
		if s.optional == optional {
			out = append(out, s.name)
		}
	}
	return out
}
