package hcclsim_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/hccl"
)

// benchRanks drives one goroutine per rank, each locked to its OS thread
// with its device set, so that every step runs on all ranks at once.
type benchRanks struct {
	reqs  []chan func(r int)
	setup []error // SetDevice failures, reported by the first step
	wg    sync.WaitGroup
}

func newBenchRanks(b *testing.B, npu *fallback.NPU, n int) *benchRanks {
	br := &benchRanks{setup: make([]error, n)}
	for r := range n {
		ch := make(chan func(int))
		br.reqs = append(br.reqs, ch)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			br.setup[r] = npu.SetDevice(int32(r))
			if br.setup[r] == nil {
				defer func() { _ = npu.ResetDevice(int32(r)) }()
			}
			for f := range ch {
				if br.setup[r] == nil {
					f(r)
				}
				br.wg.Done()
			}
		}()
	}
	b.Cleanup(func() {
		for _, ch := range br.reqs {
			close(ch)
		}
	})
	return br
}

// all runs f on every rank concurrently and fails the benchmark on error.
func (br *benchRanks) all(b *testing.B, f func(r int) error) {
	errs := make([]error, len(br.reqs))
	br.wg.Add(len(br.reqs))
	for _, ch := range br.reqs {
		ch <- func(r int) { errs[r] = f(r) }
	}
	br.wg.Wait()
	for r, err := range br.setup {
		if err != nil {
			b.Fatalf("rank %d: %v", r, err)
		}
	}
	for r, err := range errs {
		if err != nil {
			b.Fatalf("rank %d: %v", r, err)
		}
	}
}

// benchModel is one rank's loaded y = AllReduce(x) model with device IO.
type benchModel struct {
	id      acl.ModelID
	in, out acl.DatasetHandle
}

func loadBenchModel(npu *fallback.NPU, blob []byte, x, y unsafe.Pointer, size uintptr) (benchModel, error) {
	var m benchModel
	var err error
	if m.id, err = npu.LoadFromMem(unsafe.Pointer(&blob[0]), uintptr(len(blob))); err != nil {
		return m, err
	}
	for i, p := range []unsafe.Pointer{x, y} {
		ds, err := npu.CreateDataset()
		if err != nil {
			return m, err
		}
		h, err := npu.CreateDataBuffer(p, size)
		if err != nil {
			return m, err
		}
		if err := npu.AddDatasetBuffer(ds, h); err != nil {
			return m, err
		}
		if i == 0 {
			m.in = ds
		} else {
			m.out = ds
		}
	}
	return m, nil
}

// BenchmarkModelAllReduce executes y = AllReduce_sum(x) as a model on 2
// in-process ranks at once (ExecuteAsync and a stream synchronize per
// rank) with the zero-copy flags set, so the collective reads and writes
// the callers' device buffers. Measured in the same run: the same model
// without flags (x and y copied D2D on every execution: x_copy is the
// ratio, < 1 when zero copy is faster) and a bare HcclAllReduce on the
// same buffers (x_bare: what the model execution costs on top).
func BenchmarkModelAllReduce(b *testing.B) {
	const ranks = 2
	for _, elems := range []int64{1 << 14, 1 << 20} {
		b.Run(fmt.Sprintf("ranks=%d/bytes=%d", ranks, 4*elems), func(b *testing.B) {
			npu, err := fallback.New(fallback.WithDevices(ranks), fallback.WithDeviceMemory(64<<20))
			if err != nil {
				b.Fatal(err)
			}
			if err := npu.Init(""); err != nil {
				b.Fatal(err)
			}
			sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: 30 * time.Second})
			b.Cleanup(func() { _ = sim.Close(); _ = npu.Close() })
			hs, err := sim.CommInitAll([]int32{0, 1})
			if err != nil {
				b.Fatal(err)
			}
			for _, h := range hs {
				if err := sim.RegisterModelComm("tp", h); err != nil {
					b.Fatal(err)
				}
			}
			blob := func(flags ...ge.OpOption) []byte {
				g := ge.NewGraph("allreduce")
				g.Output(g.HcclAllReduce(g.Data("x", 0, acl.Float32, []int64{elems}), hccl.Sum, "tp", flags...))
				m, err := ge.Compile(g)
				if err != nil {
					b.Fatal(err)
				}
				out, err := m.MarshalBinary()
				if err != nil {
					b.Fatal(err)
				}
				return out
			}
			zc, cp := blob(ge.HcclZeroCopyFlags([]int64{1}, []int64{1})), blob()
			size := uintptr(4 * elems)
			type rankState struct {
				s      acl.StreamHandle
				x, y   unsafe.Pointer
				zc, cp benchModel
			}
			st := make([]rankState, ranks)
			br := newBenchRanks(b, npu, ranks)
			br.all(b, func(r int) error {
				rs := &st[r]
				var err error
				if rs.s, err = npu.CreateStream(); err != nil {
					return err
				}
				if rs.x, err = npu.Malloc(size, acl.MemMallocHugeFirst); err != nil {
					return err
				}
				if rs.y, err = npu.Malloc(size, acl.MemMallocHugeFirst); err != nil {
					return err
				}
				if rs.zc, err = loadBenchModel(npu, zc, rs.x, rs.y, size); err != nil {
					return err
				}
				rs.cp, err = loadBenchModel(npu, cp, rs.x, rs.y, size)
				return err
			})
			run := func(pick func(*rankState) benchModel) func(r int) error {
				return func(r int) error {
					m := pick(&st[r])
					if err := npu.ExecuteAsync(m.id, m.in, m.out, st[r].s); err != nil {
						return err
					}
					return npu.SynchronizeStream(st[r].s)
				}
			}
			runZC := run(func(rs *rankState) benchModel { return rs.zc })
			runCP := run(func(rs *rankState) benchModel { return rs.cp })
			bare := func(r int) error {
				if err := sim.AllReduce(st[r].x, st[r].y, uint64(elems), hccl.Float32, hccl.Sum, hs[r], st[r].s); err != nil {
					return err
				}
				return npu.SynchronizeStream(st[r].s)
			}

			br.all(b, runZC)
			npu.ResetCounters()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				br.all(b, runZC)
			}
			per := b.Elapsed() / time.Duration(b.N)
			c := npu.Counters()
			b.ReportMetric(float64(c.Copies())/float64(b.N*ranks), "copies/op")

			measure := func(f func(int) error) time.Duration {
				br.all(b, f)
				start := time.Now()
				for range b.N {
					br.all(b, f)
				}
				return time.Since(start) / time.Duration(b.N)
			}
			npu.ResetCounters()
			copied := measure(runCP)
			b.ReportMetric(float64(npu.Counters().Copies())/float64((b.N+1)*ranks), "copy_copies/op")
			b.ReportMetric(float64(per)/float64(max(copied, 1)), "x_copy")
			b.ReportMetric(float64(per)/float64(max(measure(bare), 1)), "x_bare")
		})
	}
}
