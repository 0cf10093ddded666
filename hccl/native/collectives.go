package native

import (
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/dl"
)

// Barrier calls HcclBarrier.
func (b *Backend) Barrier(c hccl.CommHandle, s acl.StreamHandle) error {
	f := dl.GetFrame()
	f.Args = [10]uintptr{uintptr(c), uintptr(s)}
	return b.invoke(symBarrier, f, 2)
}

// AllReduce calls HcclAllReduce.
func (b *Backend) AllReduce(send, recv unsafe.Pointer, count uint64, dt hccl.DataType, op hccl.ReduceOp, c hccl.CommHandle, s acl.StreamHandle) error {
	f := dl.GetFrame()
	f.Args = [10]uintptr{dl.Escape(send), dl.Escape(recv), uintptr(count), uintptr(uint32(dt)), uintptr(uint32(op)), uintptr(c), uintptr(s)}
	err := b.invoke(symAllReduce, f, 7)
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	return err
}

// Broadcast calls HcclBroadcast.
func (b *Backend) Broadcast(buf unsafe.Pointer, count uint64, dt hccl.DataType, root uint32, c hccl.CommHandle, s acl.StreamHandle) error {
	f := dl.GetFrame()
	f.Args = [10]uintptr{dl.Escape(buf), uintptr(count), uintptr(uint32(dt)), uintptr(root), uintptr(c), uintptr(s)}
	err := b.invoke(symBroadcast, f, 6)
	runtime.KeepAlive(buf)
	return err
}

// AllGather calls HcclAllGather.
func (b *Backend) AllGather(send, recv unsafe.Pointer, sendCount uint64, dt hccl.DataType, c hccl.CommHandle, s acl.StreamHandle) error {
	f := dl.GetFrame()
	f.Args = [10]uintptr{dl.Escape(send), dl.Escape(recv), uintptr(sendCount), uintptr(uint32(dt)), uintptr(c), uintptr(s)}
	err := b.invoke(symAllGather, f, 6)
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	return err
}

// ReduceScatter calls HcclReduceScatter.
func (b *Backend) ReduceScatter(send, recv unsafe.Pointer, recvCount uint64, dt hccl.DataType, op hccl.ReduceOp, c hccl.CommHandle, s acl.StreamHandle) error {
	f := dl.GetFrame()
	f.Args = [10]uintptr{dl.Escape(send), dl.Escape(recv), uintptr(recvCount), uintptr(uint32(dt)), uintptr(uint32(op)), uintptr(c), uintptr(s)}
	err := b.invoke(symReduceScatter, f, 7)
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	return err
}

// AlltoAllV calls HcclAlltoAllV. The four slices must have one entry per
// rank: C reads rank-size entries from each, so a shorter slice is refused
// here (HCCL_E_PARA) rather than read past.
func (b *Backend) AlltoAllV(send unsafe.Pointer, sendCounts, sdispls []uint64, sendType hccl.DataType,
	recv unsafe.Pointer, recvCounts, rdispls []uint64, recvType hccl.DataType, c hccl.CommHandle, s acl.StreamHandle) error {
	if b == nil {
		return hccl.NilHandle("HcclAlltoAllV", "native backend")
	}
	if b.fns[symAlltoAllV] == 0 || b.lib.Closed() {
		return b.unavailable(symAlltoAllV)
	}
	size, err := b.GetRankSize(c)
	if err != nil {
		return err
	}
	for _, v := range [][]uint64{sendCounts, sdispls, recvCounts, rdispls} {
		if len(v) != int(size) {
			return errorf(symAlltoAllV, hccl.EPara, "count/displacement slice of %d entries for %d ranks", len(v), size)
		}
	}
	if size == 0 {
		return errorf(symAlltoAllV, hccl.EInternal, "rank size 0")
	}
	return b.call(symAlltoAllV, uintptr(send), uintptr(unsafe.Pointer(&sendCounts[0])), uintptr(unsafe.Pointer(&sdispls[0])),
		uintptr(uint32(sendType)), uintptr(recv), uintptr(unsafe.Pointer(&recvCounts[0])), uintptr(unsafe.Pointer(&rdispls[0])),
		uintptr(uint32(recvType)), uintptr(c), uintptr(s))
}

// Send calls HcclSend.
func (b *Backend) Send(buf unsafe.Pointer, count uint64, dt hccl.DataType, destRank uint32, c hccl.CommHandle, s acl.StreamHandle) error {
	f := dl.GetFrame()
	f.Args = [10]uintptr{dl.Escape(buf), uintptr(count), uintptr(uint32(dt)), uintptr(destRank), uintptr(c), uintptr(s)}
	err := b.invoke(symSend, f, 6)
	runtime.KeepAlive(buf)
	return err
}

// Recv calls HcclRecv.
func (b *Backend) Recv(buf unsafe.Pointer, count uint64, dt hccl.DataType, srcRank uint32, c hccl.CommHandle, s acl.StreamHandle) error {
	f := dl.GetFrame()
	f.Args = [10]uintptr{dl.Escape(buf), uintptr(count), uintptr(uint32(dt)), uintptr(srcRank), uintptr(c), uintptr(s)}
	err := b.invoke(symRecv, f, 6)
	runtime.KeepAlive(buf)
	return err
}

// BatchSendRecv calls HcclBatchSendRecv with itemNum = len(items). The
// item array is Go memory holding only the caller's buffer addresses; C
// reads it during the call only.
func (b *Backend) BatchSendRecv(items []hccl.SendRecvItem, c hccl.CommHandle, s acl.StreamHandle) error {
	if uint64(len(items)) > 1<<32-1 {
		return errorf(symBatchSendRecv, hccl.EPara, "%d items", len(items))
	}
	var p *hccl.SendRecvItem
	if len(items) > 0 {
		p = &items[0]
	}
	f := dl.GetFrame()
	f.Args = [10]uintptr{dl.Escape(unsafe.Pointer(p)), uintptr(len(items)), uintptr(c), uintptr(s)}
	err := b.invoke(symBatchSendRecv, f, 4)
	runtime.KeepAlive(items)
	return err
}
