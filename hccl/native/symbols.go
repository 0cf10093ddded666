package native

import "github.com/ascend-go/cann/internal/dl"

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
	symCommInitClusterInfoConfig
	numSyms
)

// syms lists every bound function. Required are the ones every CANN
// release since the 5.x series exports. HcclBarrier and
// HcclCommInitRootInfoConfig are absent from older headers, HcclGetCommName
// and HcclCommInitAll from some builds, and the one-sided service and window
// functions live in headers the vendor may change.
var syms = [numSyms]dl.Entry{
	symGetRootInfo:            {Name: "HcclGetRootInfo", Optional: false},
	symCommInitRootInfo:       {Name: "HcclCommInitRootInfo", Optional: false},
	symCommInitRootInfoConfig: {Name: "HcclCommInitRootInfoConfig", Optional: true},
	symCommInitClusterInfo:    {Name: "HcclCommInitClusterInfo", Optional: false},
	// HcclCommInitClusterInfoConfig is in hccl.h of CANN 8.x and later only.
	symCommInitClusterInfoConfig: {Name: "HcclCommInitClusterInfoConfig", Optional: true},
	symCommInitAll:               {Name: "HcclCommInitAll", Optional: true},
	symCommDestroy:               {Name: "HcclCommDestroy", Optional: false},
	symGetRankSize:               {Name: "HcclGetRankSize", Optional: false},
	symGetRankId:                 {Name: "HcclGetRankId", Optional: false},
	symGetCommName:               {Name: "HcclGetCommName", Optional: true},
	symGetCommAsyncError:         {Name: "HcclGetCommAsyncError", Optional: true},
	symGetErrorString:            {Name: "HcclGetErrorString", Optional: true},
	symBarrier:                   {Name: "HcclBarrier", Optional: true},
	symAllReduce:                 {Name: "HcclAllReduce", Optional: false},
	symBroadcast:                 {Name: "HcclBroadcast", Optional: false},
	symAllGather:                 {Name: "HcclAllGather", Optional: false},
	symReduceScatter:             {Name: "HcclReduceScatter", Optional: false},
	symAlltoAllV:                 {Name: "HcclAlltoAllV", Optional: true},
	symSend:                      {Name: "HcclSend", Optional: false},
	symRecv:                      {Name: "HcclRecv", Optional: false},
	symBatchSendRecv:             {Name: "HcclBatchSendRecv", Optional: true},
	symRegisterMem:               {Name: "HcclRegisterMem", Optional: true},
	symDeregisterMem:             {Name: "HcclDeregisterMem", Optional: true},
	symExchangeMemDesc:           {Name: "HcclExchangeMemDesc", Optional: true},
	symEnableMemAccess:           {Name: "HcclEnableMemAccess", Optional: true},
	symDisableMemAccess:          {Name: "HcclDisableMemAccess", Optional: true},
	symBatchGet:                  {Name: "HcclBatchGet", Optional: true},
	symBatchPut:                  {Name: "HcclBatchPut", Optional: true},
	symCommRegister:              {Name: "HcclCommRegister", Optional: true},
	symCommDeregister:            {Name: "HcclCommDeregister", Optional: true},
	symCommExchangeMem:           {Name: "HcclCommExchangeMem", Optional: true},
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
		if s.Optional == optional {
			out = append(out, s.Name)
		}
	}
	return out
}
