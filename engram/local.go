package engram

import (
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
)

// Own rows and remote batches, as the fetch kernel moves them.
//
// The kernel copies the rows the rank owns through its cores' local
// memory (LocalFetch of engram_fetch_arch35.h), never through a one-sided
// batch: HCCL refuses a BatchGet addressed to the caller's own rank
// (hcomm legacy tree, one_sided_service/one_sided_service_adapt.cc:
// 427-429). A backend that models that local path as one stream task per
// batch (the HCCL fallback: localCopier) gets one call; any other backend
// gets one aclrtMemcpyAsync per run of adjacent rows.

// localCopier is the optional hook of a backend that queues a batch of
// copies within the rank's own memory as one stream task: copies[i] moves
// Count elements from RemoteAddr to LocalAddr.
type localCopier interface {
	CopyLocal(c hccl.CommHandle, copies []hccl.OneSideOpDesc, s acl.StreamHandle) error
}

// localCopies queues copies (LocalAddr ← RemoteAddr, Count bytes each)
// within this rank on sh. Every source lies in the memory at srcBase,
// which the per-run path needs as a pointer; kind is the copies' kind.
func localCopies(rt acl.Backend, be hccl.Backend, ch hccl.CommHandle, copies []hccl.OneSideOpDesc,
	srcBase unsafe.Pointer, kind acl.MemcpyKind, sh acl.StreamHandle) error {
	if len(copies) == 0 {
		return nil
	}
	if lc, ok := be.(localCopier); ok {
		return lc.CopyLocal(ch, copies, sh)
	}
	for i := 0; i < len(copies); {
		n := copies[i].Count
		j := i + 1
		for j < len(copies) && uintptr(copies[j].LocalAddr) == uintptr(copies[j-1].LocalAddr)+uintptr(copies[j-1].Count) &&
			copies[j].RemoteAddr == copies[j-1].RemoteAddr+uintptr(copies[j-1].Count) {
			n += copies[j].Count
			j++
		}
		src := unsafe.Add(srcBase, int(copies[i].RemoteAddr-uintptr(srcBase)))
		if err := rt.MemcpyAsync(copies[i].LocalAddr, uintptr(n), src, uintptr(n), kind, sh); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// batchEnd is where the one-sided batch that starts at post lo ends: at
// most hccl.MaxOneSideDescs posts (HCCL's limit per BatchGet), cut after
// the last batch commit of the kernel that fits (whole committed batches
// of one (core, channel) go together), or at the limit when none does.
func batchEnd(ps []Post, lo int) int {
	hi := min(len(ps), lo+hccl.MaxOneSideDescs)
	if hi == len(ps) {
		return hi
	}
	for i := hi - 1; i >= lo; i-- {
		if ps[i].Commit() {
			return i + 1
		}
	}
	return hi
}
