package native_test

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/hccl/native"
)

// soloComm is a one-rank communicator: collectives need no rendezvous, so
// a benchmark measures the binding and the stub's bookkeeping only.
func soloComm(b *testing.B, be *native.Backend) hccl.CommHandle {
	hs, err := be.CommInitAll([]int32{0})
	require.NoError(b, err)
	b.Cleanup(func() { _ = be.CommDestroy(hs[0]) })
	return hs[0]
}

// BenchmarkAllReduceCall measures one HcclAllReduce through the binding on
// a one-rank communicator, against the same C call made with a bare
// purego.SyscallN in the same run (x_raw: binding time / bare time).
func BenchmarkAllReduceCall(b *testing.B) {
	be := openStub(b)
	c := soloComm(b, be)
	mem := &plainRank{t: b, b: be, s: acl.StreamHandle(stubCall(b, be, "HcclStubStreamCreate"))}
	defer mem.Close()
	buf, err := mem.Alloc(64)
	require.NoError(b, err)
	st := mem.Stream()

	fn := be.Symbol("HcclAllReduce")
	// The bare call: a prepared argument slice, no checks, no error value.
	args := []uintptr{uintptr(buf), uintptr(buf), 16, uintptr(hccl.Float32), uintptr(hccl.Sum), uintptr(c), uintptr(st)}
	raw := func(n int) time.Duration {
		start := time.Now()
		for i := 0; i < n; i++ {
			purego.SyscallN(fn, args...)
		}
		return time.Since(start)
	}
	raw(1000) // warm up
	const rawN = 20000
	rawNs := float64(raw(rawN).Nanoseconds()) / rawN

	b.ReportAllocs()
	for b.Loop() {
		if err := be.AllReduce(buf, buf, 16, hccl.Float32, hccl.Sum, c, st); err != nil {
			b.Fatal(err)
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(rawNs, "raw_ns/op")
	b.ReportMetric(perOp/rawNs, "x_raw")
	b.ReportMetric(1, "ffi_calls/op")
}

// BenchmarkBatchGet reads rows of a peer's registered memory with
// HcclBatchGet calls of at most hccl.MaxOneSideDescs descriptors each (the
// Engram fetch pattern; more in one call is HCCL_E_PARA, MAX_DESC_NUM in
// one_sided_service_adapt.cc:47), against Go copy() of the same rows in
// the same run (x_copy: BatchGet time / copy time). The stub copies with
// memmove, so the ratio is the cost of the binding and the descriptor
// checks. ffi_calls/op counts the calls one op of all the rows takes.
func BenchmarkBatchGet(b *testing.B) {
	for _, bc := range []struct {
		name      string
		rows, row int
	}{{"rows=256/row=1KiB", 256, 1024}, {"rows=4096/row=128B", 4096, 128}} {
		b.Run(bc.name, func(b *testing.B) {
			be := openStub(b)
			hs, err := be.CommInitAll([]int32{0, 1})
			require.NoError(b, err)
			defer func() { _ = be.CommDestroy(hs[0]); _ = be.CommDestroy(hs[1]) }()
			mem := &plainRank{}
			defer mem.Close()
			table := bc.rows * bc.row * 2
			src, err := mem.Alloc(uintptr(table))
			require.NoError(b, err)
			dst, err := mem.Alloc(uintptr(bc.rows * bc.row))
			require.NoError(b, err)

			// Rank 1 registers its table for rank 0; both exchange; rank 0
			// enables access.
			d, err := be.RegisterMem(hs[1], 0, hccl.MemDevice, src, uint64(table))
			require.NoError(b, err)
			var got []hccl.MemDesc
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, err := be.ExchangeMemDesc(hs[1], 0, []hccl.MemDesc{d}, 0, nil)
				require.NoError(b, err)
			}()
			go func() {
				defer wg.Done()
				remote := make([]hccl.MemDesc, 1)
				n, err := be.ExchangeMemDesc(hs[0], 1, nil, 0, remote)
				require.NoError(b, err)
				got = remote[:n]
			}()
			wg.Wait()
			m, err := be.EnableMemAccess(hs[0], &got[0])
			require.NoError(b, err)

			// Every other row of the table, the gather of a sparse fetch.
			descs := make([]hccl.OneSideOpDesc, bc.rows)
			for i := range descs {
				descs[i] = hccl.OneSideOpDesc{LocalAddr: unsafe.Add(dst, i*bc.row), RemoteAddr: m.Addr + uintptr(2*i*bc.row),
					Count: uint64(bc.row / 2), DataType: hccl.BFloat16}
			}
			srcB := unsafe.Slice((*byte)(src), table)
			dstB := unsafe.Slice((*byte)(dst), bc.rows*bc.row)
			copyRows := func() {
				for i := 0; i < bc.rows; i++ {
					copy(dstB[i*bc.row:(i+1)*bc.row], srcB[2*i*bc.row:])
				}
			}
			const copyN = 200
			copyRows()
			start := time.Now()
			for i := 0; i < copyN; i++ {
				copyRows()
			}
			copyNs := float64(time.Since(start).Nanoseconds()) / copyN

			// The descriptors in calls of at most MaxOneSideDescs, as
			// hccl.Window.Get splits them.
			var calls [][]hccl.OneSideOpDesc
			for rest := descs; len(rest) > 0; {
				n := min(len(rest), hccl.MaxOneSideDescs)
				calls, rest = append(calls, rest[:n]), rest[n:]
			}
			b.SetBytes(int64(bc.rows * bc.row))
			b.ReportAllocs()
			for b.Loop() {
				for _, c := range calls {
					if err := be.BatchGet(hs[0], 1, c, 0); err != nil {
						b.Fatal(err)
					}
				}
			}
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(float64(bc.rows*bc.row)/perOp, "GB/s")
			b.ReportMetric(perOp/copyNs, "x_copy")
			b.ReportMetric(float64(len(calls)), "ffi_calls/op")
		})
	}
}
