package hccl

import "strconv"

// CmdType is an HcclCMDType: the kind of an HCCL operation, as the library
// reports it (for example in an operation's exception or profiling
// information). A plain value.
type CmdType int32

// HcclCMDType values (hicann/hcomm include/hccl/hccl_types.h, enum
// HcclCMDType). 19 is unassigned; the values from 100 on are internal
// phases of a communicator's life.
const (
	CmdInvalid        CmdType = 0
	CmdBroadcast      CmdType = 1
	CmdAllReduce      CmdType = 2
	CmdReduce         CmdType = 3
	CmdSend           CmdType = 4
	CmdReceive        CmdType = 5
	CmdAllGather      CmdType = 6
	CmdReduceScatter  CmdType = 7
	CmdAlltoAllV      CmdType = 8
	CmdAlltoAllVC     CmdType = 9
	CmdAlltoAll       CmdType = 10
	CmdGather         CmdType = 11
	CmdScatter        CmdType = 12
	CmdBatchSendRecv  CmdType = 13
	CmdBatchPut       CmdType = 14
	CmdBatchGet       CmdType = 15
	CmdAllGatherV     CmdType = 16
	CmdReduceScatterV CmdType = 17
	CmdBatchWrite     CmdType = 18
	CmdHalfAlltoAllV  CmdType = 20
	CmdAll            CmdType = 21
	CmdFinalize       CmdType = 100
	CmdInterGroupSync CmdType = 101
	CmdInit           CmdType = 102
	CmdBarrier        CmdType = 103
	CmdMax            CmdType = 104
)

var cmdTypeNames = map[CmdType]string{
	CmdInvalid: "HCCL_CMD_INVALID", CmdBroadcast: "HCCL_CMD_BROADCAST", CmdAllReduce: "HCCL_CMD_ALLREDUCE",
	CmdReduce: "HCCL_CMD_REDUCE", CmdSend: "HCCL_CMD_SEND", CmdReceive: "HCCL_CMD_RECEIVE",
	CmdAllGather: "HCCL_CMD_ALLGATHER", CmdReduceScatter: "HCCL_CMD_REDUCE_SCATTER",
	CmdAlltoAllV: "HCCL_CMD_ALLTOALLV", CmdAlltoAllVC: "HCCL_CMD_ALLTOALLVC", CmdAlltoAll: "HCCL_CMD_ALLTOALL",
	CmdGather: "HCCL_CMD_GATHER", CmdScatter: "HCCL_CMD_SCATTER", CmdBatchSendRecv: "HCCL_CMD_BATCH_SEND_RECV",
	CmdBatchPut: "HCCL_CMD_BATCH_PUT", CmdBatchGet: "HCCL_CMD_BATCH_GET", CmdAllGatherV: "HCCL_CMD_ALLGATHER_V",
	CmdReduceScatterV: "HCCL_CMD_REDUCE_SCATTER_V", CmdBatchWrite: "HCCL_CMD_BATCH_WRITE",
	CmdHalfAlltoAllV: "HCCL_CMD_HALF_ALLTOALLV", CmdAll: "HCCL_CMD_ALL", CmdFinalize: "HCCL_CMD_FINALIZE",
	CmdInterGroupSync: "HCCL_CMD_INTER_GROUP_SYNC", CmdInit: "HCCL_CMD_INIT", CmdBarrier: "HCCL_CMD_BARRIER",
	CmdMax: "HCCL_CMD_MAX",
}

// String returns the HCCL_CMD_* name ("HcclCMDType(n)" for an unknown value).
func (c CmdType) String() string {
	if n, ok := cmdTypeNames[c]; ok {
		return n
	}
	return "HcclCMDType(" + strconv.Itoa(int(c)) + ")"
}

// Valid reports whether c is a defined HcclCMDType.
func (c CmdType) Valid() bool { _, ok := cmdTypeNames[c]; return ok }
