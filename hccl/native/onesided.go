package native

import (
	"runtime"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/dl"
)

// RegisterMem calls HcclRegisterMem.
func (b *Backend) RegisterMem(c hccl.CommHandle, remoteRank uint32, typ hccl.MemType, addr unsafe.Pointer, size uint64) (hccl.MemDesc, error) {
	d := new(hccl.MemDesc) // heap: C writes 512 bytes into it
	err := b.call(symRegisterMem, uintptr(c), uintptr(remoteRank), uintptr(uint32(typ)), uintptr(addr), uintptr(size), uintptr(unsafe.Pointer(d)))
	return *d, err
}

// DeregisterMem calls HcclDeregisterMem.
func (b *Backend) DeregisterMem(c hccl.CommHandle, desc *hccl.MemDesc) error {
	return b.call(symDeregisterMem, uintptr(c), uintptr(unsafe.Pointer(desc)))
}

// ExchangeMemDesc calls HcclExchangeMemDesc. The two HcclMemDescs structs
// point at the Go slices' arrays, which are pinned for the call as the cgo
// rules require of Go memory that holds Go pointers.
func (b *Backend) ExchangeMemDesc(c hccl.CommHandle, remoteRank uint32, local []hccl.MemDesc, timeout int32, remote []hccl.MemDesc) (uint32, error) {
	if uint64(len(local)) > 1<<32-1 || uint64(len(remote)) > 1<<32-1 {
		return 0, errorf(symExchangeMemDesc, hccl.EPara, "%d local, %d remote descriptors", len(local), len(remote))
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	descs := new([2]hccl.MemDescs)
	if len(local) > 0 {
		pin.Pin(&local[0])
		descs[0] = hccl.MemDescs{Array: &local[0], ArrayLength: uint32(len(local))}
	}
	if len(remote) > 0 {
		pin.Pin(&remote[0])
		descs[1] = hccl.MemDescs{Array: &remote[0], ArrayLength: uint32(len(remote))}
	}
	var n uint32
	err := b.call(symExchangeMemDesc, uintptr(c), uintptr(remoteRank), uintptr(unsafe.Pointer(&descs[0])), uintptr(uint32(timeout)),
		uintptr(unsafe.Pointer(&descs[1])), uintptr(unsafe.Pointer(&n)))
	return n, err
}

// EnableMemAccess calls HcclEnableMemAccess.
func (b *Backend) EnableMemAccess(c hccl.CommHandle, remoteDesc *hccl.MemDesc) (hccl.CommMem, error) {
	m := new(hccl.CommMem)
	err := b.call(symEnableMemAccess, uintptr(c), uintptr(unsafe.Pointer(remoteDesc)), uintptr(unsafe.Pointer(m)))
	return *m, err
}

// DisableMemAccess calls HcclDisableMemAccess.
func (b *Backend) DisableMemAccess(c hccl.CommHandle, remoteDesc *hccl.MemDesc) error {
	return b.call(symDisableMemAccess, uintptr(c), uintptr(unsafe.Pointer(remoteDesc)))
}

// BatchGet calls HcclBatchGet with descNum = len(descs).
func (b *Backend) BatchGet(c hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, s acl.StreamHandle) error {
	return b.batch(symBatchGet, c, remoteRank, descs, s)
}

// BatchPut calls HcclBatchPut with descNum = len(descs).
func (b *Backend) BatchPut(c hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, s acl.StreamHandle) error {
	return b.batch(symBatchPut, c, remoteRank, descs, s)
}

func (b *Backend) batch(id sym, c hccl.CommHandle, remoteRank uint32, descs []hccl.OneSideOpDesc, s acl.StreamHandle) error {
	if uint64(len(descs)) > 1<<32-1 {
		return errorf(id, hccl.EPara, "%d descriptors", len(descs))
	}
	var p *hccl.OneSideOpDesc
	if len(descs) > 0 {
		p = &descs[0]
	}
	f := dl.GetFrame()
	f.Args = [10]uintptr{uintptr(c), uintptr(remoteRank), dl.Escape(unsafe.Pointer(p)), uintptr(len(descs)), uintptr(s)}
	err := b.invoke(id, f, 5)
	runtime.KeepAlive(descs)
	return err
}

// CommRegister calls HcclCommRegister.
func (b *Backend) CommRegister(c hccl.CommHandle, addr unsafe.Pointer, size uint64, flag uint32) (hccl.RegistrationHandle, error) {
	var h uintptr
	err := b.call(symCommRegister, uintptr(c), uintptr(addr), uintptr(size), uintptr(unsafe.Pointer(&h)), uintptr(flag))
	return hccl.RegistrationHandle(h), err
}

// CommDeregister calls HcclCommDeregister.
func (b *Backend) CommDeregister(c hccl.CommHandle, w hccl.RegistrationHandle) error {
	return b.call(symCommDeregister, uintptr(c), uintptr(w))
}

// CommExchangeMem calls HcclCommExchangeMem with peerRankNum =
// len(peerRanks).
func (b *Backend) CommExchangeMem(c hccl.CommHandle, w hccl.RegistrationHandle, peerRanks []uint32) error {
	if uint64(len(peerRanks)) > 1<<32-1 {
		return errorf(symCommExchangeMem, hccl.EPara, "%d peers", len(peerRanks))
	}
	// An empty list is a valid pointer with peerRankNum 0 (HCCL_E_PARA,
	// op_base.cc:5714), as on the fallback; a NULL array is HCCL_E_PTR.
	var none uint32
	p := &none
	if len(peerRanks) > 0 {
		p = &peerRanks[0]
	}
	return b.call(symCommExchangeMem, uintptr(c), uintptr(w), uintptr(unsafe.Pointer(p)), uintptr(len(peerRanks)))
}
