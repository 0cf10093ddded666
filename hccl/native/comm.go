package native

import (
	"unsafe"

	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/dl"
)

// GetRootInfo calls HcclGetRootInfo.
func (b *Backend) GetRootInfo() (hccl.RootInfo, error) {
	ri := new(hccl.RootInfo) // heap: C writes 4108 bytes into it
	err := b.call(symGetRootInfo, uintptr(unsafe.Pointer(ri)))
	return *ri, err
}

// CommInitRootInfo calls HcclCommInitRootInfo.
func (b *Backend) CommInitRootInfo(nRanks uint32, root *hccl.RootInfo, rank uint32) (hccl.CommHandle, error) {
	var h uintptr
	err := b.call(symCommInitRootInfo, uintptr(nRanks), uintptr(unsafe.Pointer(root)), uintptr(rank), uintptr(unsafe.Pointer(&h)))
	return hccl.CommHandle(h), err
}

// CommInitRootInfoConfig calls HcclCommInitRootInfoConfig.
func (b *Backend) CommInitRootInfoConfig(nRanks uint32, root *hccl.RootInfo, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	var h uintptr
	err := b.call(symCommInitRootInfoConfig, uintptr(nRanks), uintptr(unsafe.Pointer(root)), uintptr(rank),
		uintptr(unsafe.Pointer(cfg)), uintptr(unsafe.Pointer(&h)))
	return hccl.CommHandle(h), err
}

// CommInitClusterInfo calls HcclCommInitClusterInfo with the path of a rank
// table file.
func (b *Backend) CommInitClusterInfo(clusterInfo string, rank uint32) (hccl.CommHandle, error) {
	path, err := cString(symCommInitClusterInfo, clusterInfo)
	if err != nil {
		return 0, err
	}
	var h uintptr
	err = b.call(symCommInitClusterInfo, uintptr(unsafe.Pointer(&path[0])), uintptr(rank), uintptr(unsafe.Pointer(&h)))
	return hccl.CommHandle(h), err
}

// CommInitClusterInfoConfig calls HcclCommInitClusterInfoConfig (an
// optional symbol: an error matching hccl.ErrNotSupported without it).
func (b *Backend) CommInitClusterInfoConfig(clusterInfo string, rank uint32, cfg *hccl.CommConfig) (hccl.CommHandle, error) {
	path, err := cString(symCommInitClusterInfoConfig, clusterInfo)
	if err != nil {
		return 0, err
	}
	var h uintptr
	err = b.call(symCommInitClusterInfoConfig, uintptr(unsafe.Pointer(&path[0])), uintptr(rank),
		uintptr(unsafe.Pointer(cfg)), uintptr(unsafe.Pointer(&h)))
	return hccl.CommHandle(h), err
}

var _ hccl.ClusterInfoConfigBackend = (*Backend)(nil)

// CommInitAll calls HcclCommInitAll with ndev = len(devices).
func (b *Backend) CommInitAll(devices []int32) ([]hccl.CommHandle, error) {
	if len(devices) == 0 {
		return nil, b.call(symCommInitAll, 0, 0, 0)
	}
	if uint64(len(devices)) > 1<<32-1 {
		return nil, errorf(symCommInitAll, hccl.EPara, "%d devices", len(devices))
	}
	hs := make([]uintptr, len(devices))
	if err := b.call(symCommInitAll, uintptr(len(devices)), uintptr(unsafe.Pointer(&devices[0])), uintptr(unsafe.Pointer(&hs[0]))); err != nil {
		return nil, err
	}
	out := make([]hccl.CommHandle, len(hs))
	for i, h := range hs {
		out[i] = hccl.CommHandle(h)
	}
	return out, nil
}

// CommDestroy calls HcclCommDestroy.
func (b *Backend) CommDestroy(c hccl.CommHandle) error {
	return b.call(symCommDestroy, uintptr(c))
}

// GetRankSize calls HcclGetRankSize.
func (b *Backend) GetRankSize(c hccl.CommHandle) (uint32, error) {
	var n uint32
	err := b.call(symGetRankSize, uintptr(c), uintptr(unsafe.Pointer(&n)))
	return n, err
}

// GetRankId calls HcclGetRankId.
func (b *Backend) GetRankId(c hccl.CommHandle) (uint32, error) {
	var r uint32
	err := b.call(symGetRankId, uintptr(c), uintptr(unsafe.Pointer(&r)))
	return r, err
}

// GetCommName calls HcclGetCommName with a COMM_NAME_MAX_LENGTH buffer.
func (b *Backend) GetCommName(c hccl.CommHandle) (string, error) {
	buf := new([hccl.CommNameMaxLength + 1]byte) // one spare NUL against an unterminated name
	if err := b.call(symGetCommName, uintptr(c), uintptr(unsafe.Pointer(buf))); err != nil {
		return "", err
	}
	return hccl.CString(buf[:]), nil
}

// GetCommAsyncError calls HcclGetCommAsyncError.
func (b *Backend) GetCommAsyncError(c hccl.CommHandle) (hccl.Result, error) {
	var r int32
	err := b.call(symGetCommAsyncError, uintptr(c), uintptr(unsafe.Pointer(&r)))
	return hccl.Result(r), err
}

// ErrorString returns HcclGetErrorString's text for r, or the built-in
// name when the library lacks the function.
func (b *Backend) ErrorString(r hccl.Result) string {
	if b == nil {
		return r.String()
	}
	fn := b.fns[symGetErrorString]
	if fn == 0 || b.lib.Closed() {
		return r.String()
	}
	p := b.rawCall(fn, uintptr(uint32(r)))
	if p == 0 {
		return r.String()
	}
	return goString(p)
}

// cString returns s as a NUL-terminated byte slice, refusing interior NULs.
func cString(id sym, s string) ([]byte, error) {
	b, ok := dl.CString(s)
	if !ok {
		return nil, errorf(id, hccl.EPara, "string contains NUL")
	}
	return b, nil
}

// goString copies the NUL-terminated C string at p, which C owns (static
// storage).
var goString = dl.GoString
