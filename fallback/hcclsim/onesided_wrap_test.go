package hcclsim_test

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/ascend-go/cann/hccl"
)

// TestOneSidedLocalRangeWraps: a BatchGet or BatchPut whose local address
// plus length runs past the end of the address space fails with
// HCCL_E_PARA on the calling rank (it used to panic in the caller); the
// good descriptor before it has moved, as on the device.
func TestOneSidedLocalRangeWraps(t *testing.T) {
	const n, size = 2, 4096
	npu := newNPU(t, n)
	sim := newSim(t, npu)
	g := newGroup(t, &npuEnv{npu: npu, sim: sim}, n)
	mem := make([]unsafe.Pointer, n)
	want := make([][]byte, n)
	g.must("alloc", g.each(func(w *rankW) error {
		want[w.rank] = bytes.Repeat([]byte{byte(1 + w.rank)}, size)
		var err error
		mem[w.rank], err = w.buf(want[w.rank], size)
		return err
	}))
	enabled := exchangeAll(t, g, mem, size)
	for _, get := range []bool{true, false} {
		for _, local := range []uintptr{^uintptr(0) - 100, ^uintptr(0)} {
			g.on(0, func(w *rankW) error {
				descs := []hccl.OneSideOpDesc{
					{LocalAddr: mem[0], RemoteAddr: enabled[0][1].Addr, Count: 16, DataType: hccl.Uint8},
					{LocalAddr: foreign(local), RemoteAddr: enabled[0][1].Addr, Count: 1000, DataType: hccl.Uint8},
				}
				var err error
				if get {
					err = g.b.BatchGet(w.comm, 1, descs, w.r.Stream())
				} else {
					err = g.b.BatchPut(w.comm, 1, descs, w.r.Stream())
				}
				assert.Equal(t, hccl.EPara, hccl.ResultOf(err), "get=%v local %#x: %v", get, local, err)
				return w.r.Sync()
			})
		}
	}
	// The good descriptor before the bad one moved (the device queues
	// descriptors one by one): rank 0's first 16 bytes are rank 1's; the
	// BatchPuts wrote them back unchanged.
	copy(want[0][:16], want[1][:16])
	g.must("only the good descriptors moved", g.each(func(w *rankW) error {
		got, err := w.read(mem[w.rank], size)
		if err != nil {
			return err
		}
		assert.Equal(t, want[w.rank], got, "rank %d", w.rank)
		return nil
	}))
}
