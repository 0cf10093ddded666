package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/fallback/hcclsim/procs"
	"github.com/ascend-go/cann/hccl"
)

// HCCL benchmarks of the fallback's HCCL model, in process (every rank a
// device of one NPU, driven by its own goroutine) and across processes
// (every rank its own process, mapping the others' device memory, so data
// moves directly between the ranks' buffers):
//
//   - BenchmarkHCCLAllReduce: fp32 SUM AllReduce on 2 and 4 ranks, 1 KiB to
//     64 MiB, every rank queueing a batch of AllReduces on its stream and
//     synchronizing once, as nccl-tests do. Reports algbw (bytes/time) and
//     busbw = algbw × 2(n−1)/n in GB/s, and, in process, against baselines
//     timed in alternating batches in the same run:
//     x_copy = busbw / bandwidth of a single-thread copy() of the same
//     bytes between Go slices (the target: x_copy ≥ 0.5 from 16 MiB up);
//     x_devcopy = the same against copy() between two device buffers
//     (huge pages, like the device's; the Go heap has none);
//     xmax_copy = the x_copy of the machine's limit: every rank's input
//     copied to its output by GOMAXPROCS threads in parallel, which is the
//     AllReduce's memory traffic without its arithmetic or its meetings.
//   - BenchmarkHCCLBatchGet: one-sided reads of a peer's registered
//     memory: small reads (64 and 160 B, Engram rows) in Mreads/s, large
//     reads (64 KiB, 1 MiB) in GB/s.
//
// The multi-process variants time the operations inside the rank
// processes, so the request pipe between the benchmark and its children is
// not measured.
//
// Reading x_copy: an AllReduce must read every rank's input and write
// every rank's output, 2·n·S bytes of memory traffic for S-byte messages,
// where a copy moves 2·S; the in-process transport moves exactly that
// (each rank reduces its share in one pass, streaming it to every output
// with non-temporal stores). x_copy is therefore at most
// (B_ranks / B_copy)·2(n−1)/n², with B_ranks the bandwidth the ranks'
// threads reach together and B_copy that of one copying thread: 0.5 times
// that ratio for 2 ranks, 0.375 times it for 4. More ranks than processors
// cannot raise B_ranks, so on two processors 4 ranks meet 0.5 only where
// two threads move a third more bytes than one; xmax_copy measures that
// limit in each run. The ratio rewards idle processors; on a loaded
// machine it drops.

var hcclSizes = []int{1 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20}

func hcclSizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// TestHCCLRankProcess is not a test: the multi-process benchmarks start
// the test binary again with -test.run naming it, and it then serves as a
// rank process.
func TestHCCLRankProcess(t *testing.T) {
	if !procs.IsChild() {
		t.Skip("only meaningful as a rank process of the HCCL benchmarks")
	}
	procs.ServeChild()
}

// hcclWorker is one in-process rank: a goroutine locked to its OS thread
// with its device current and a stream.
type hcclWorker struct {
	dev  int32
	s    acl.StreamHandle
	comm hccl.CommHandle
	reqs chan func()
}

func (w *hcclWorker) do(f func()) {
	done := make(chan struct{})
	w.reqs <- func() { f(); close(done) }
	<-done
}

// hcclInProc is n in-process ranks over one NPU.
type hcclInProc struct {
	npu *fallback.NPU
	sim *hcclsim.Sim
	ws  []*hcclWorker
}

func openHCCLInProc(b *testing.B, n int, devMem uintptr) *hcclInProc {
	npu, err := fallback.New(fallback.WithDevices(n), fallback.WithDeviceMemory(devMem), fallback.WithHostMemory(1<<20))
	if err != nil {
		b.Fatal(err)
	}
	if err := npu.Init(""); err != nil {
		b.Fatal(err)
	}
	e := &hcclInProc{npu: npu, sim: hcclsim.New(npu, hcclsim.Options{ExecTimeout: time.Minute})}
	for i := 0; i < n; i++ {
		w := &hcclWorker{dev: int32(i), reqs: make(chan func())}
		ready := make(chan error)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			err := npu.SetDevice(w.dev)
			if err == nil {
				w.s, err = npu.CreateStream()
			}
			ready <- err
			for f := range w.reqs {
				f()
			}
			_ = npu.DestroyStream(w.s)
			_ = npu.ResetDevice(w.dev)
		}()
		if err := <-ready; err != nil {
			b.Fatal(err)
		}
		e.ws = append(e.ws, w)
	}
	devs := make([]int32, n)
	for i := range devs {
		devs[i] = int32(i)
	}
	hs, err := e.sim.CommInitAll(devs)
	if err != nil {
		b.Fatal(err)
	}
	for i, w := range e.ws {
		w.comm = hs[i]
	}
	return e
}

// each runs f on every rank concurrently and returns the first error.
func (e *hcclInProc) each(f func(r int, w *hcclWorker) error) error {
	errs := make([]error, len(e.ws))
	var wg sync.WaitGroup
	for r, w := range e.ws {
		wg.Add(1)
		w.reqs <- func() { defer wg.Done(); errs[r] = f(r, w) }
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *hcclInProc) close() {
	_ = e.each(func(r int, w *hcclWorker) error { return e.sim.CommDestroy(w.comm) })
	for _, w := range e.ws {
		close(w.reqs)
	}
	_ = e.sim.Close()
	_ = e.npu.Close()
}

// fill writes random fp32-friendly bytes into device memory p.
func (e *hcclInProc) fill(p unsafe.Pointer, n int, seed uint64) error {
	host := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	for i := 0; i+4 <= n; i += 4 {
		// small integers as floats: sums stay exact
		v := float32(r.IntN(64))
		*(*float32)(unsafe.Pointer(&host[i])) = v
	}
	return e.npu.Memcpy(p, uintptr(n), unsafe.Pointer(&host[0]), uintptr(n), acl.MemcpyHostToDevice)
}

// BenchmarkHCCLAllReduce: see the file comment.
func BenchmarkHCCLAllReduce(b *testing.B) {
	for _, n := range []int{2, 4} {
		b.Run(fmt.Sprintf("inproc/ranks=%d", n), func(b *testing.B) { benchAllReduceInProc(b, n) })
	}
	for _, n := range []int{2, 4} {
		b.Run(fmt.Sprintf("procs/ranks=%d", n), func(b *testing.B) { benchAllReduceProcs(b, n) })
	}
}

// busbw converts one AllReduce of size bytes taking d on n ranks to bus
// bandwidth in GB/s.
func busbw(size, n int, d time.Duration) float64 {
	return float64(size) / d.Seconds() * 2 * float64(n-1) / float64(n) / 1e9
}

// copyAndOp times a single-thread copy() of size bytes between two Go
// slices beside f (alternating batches, one call per batch element) and
// returns the copy's bandwidth in GB/s and f's median time per call.
func copyAndOp(size int, f func()) (copyGBs float64, op time.Duration) {
	// Random source bytes: an untouched source would be the kernel's
	// shared zero page, always in the cache (a copy of no real data).
	src, dst := randomBytes(size), make([]byte, size)
	copy(dst, src)
	ds := medianTimes(size, 4<<20, 9, func() { copy(dst, src) }, f)
	return float64(size) / ds[0].Seconds() / 1e9, ds[1]
}

func benchAllReduceInProc(b *testing.B, n int) {
	e := openHCCLInProc(b, n, 2*64<<20+(4<<20))
	defer e.close()
	for _, size := range hcclSizes {
		b.Run("size="+hcclSizeName(size), func(b *testing.B) {
			send, recv := make([]unsafe.Pointer, n), make([]unsafe.Pointer, n)
			err := e.each(func(r int, w *hcclWorker) error {
				var err error
				if send[r], err = e.npu.Malloc(uintptr(size), acl.MemMallocHugeFirst); err != nil {
					return err
				}
				if recv[r], err = e.npu.Malloc(uintptr(size), acl.MemMallocHugeFirst); err != nil {
					return err
				}
				if err := e.fill(recv[r], size, 1); err != nil {
					return err
				}
				return e.fill(send[r], size, uint64(r))
			})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				_ = e.each(func(r int, w *hcclWorker) error {
					_ = e.npu.Free(send[r])
					return e.npu.Free(recv[r])
				})
			}()
			// As nccl-tests do: every rank queues k AllReduces on its
			// stream and synchronizes once, so the time is the collective's
			// (queued data phases run back to back), not the wake-ups of a
			// synchronize after every call.
			count := uint64(size / 4)
			k := max(4, min(64, (16<<20)/size))
			batch := func() {
				err := e.each(func(r int, w *hcclWorker) error {
					for range k {
						if err := e.sim.AllReduce(send[r], recv[r], count, hccl.Float32, hccl.Sum, w.comm, w.s); err != nil {
							return err
						}
					}
					return e.npu.SynchronizeStream(w.s)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			batch() // warm: pages touched, scratch allocated
			b.SetBytes(int64(size * k))
			b.ReportAllocs()
			for b.Loop() {
				batch()
			}
			// Baselines, alternated with the AllReduce batches: copy()
			// between Go slices (x_copy, the target's), and copy() between
			// two device buffers (x_devcopy; device memory is on huge
			// pages, as on the device, which the Go heap is not).
			src, dst := randomBytes(size), make([]byte, size)
			devSrc := unsafe.Slice((*byte)(send[0]), size)
			devDst := unsafe.Slice((*byte)(recv[0]), size)
			// A batch of copies moves at least 4 MiB, so from 4 MiB up every
			// copy is a single one, cold like each AllReduce of a batch
			// (whose inputs and outputs together exceed the cache): k
			// copies of one buffer in a row would run from the cache.
			kc := max(1, (4<<20)/size)
			copies := func(d, s []byte) func() {
				return func() {
					for range kc {
						copy(d, s)
					}
				}
			}
			// The machine's limit: every rank's input copied to its output
			// by as many threads as there are processors, in parallel. That
			// is the AllReduce's memory traffic without the arithmetic and
			// the meetings, so no AllReduce can beat it; xmax_copy is the
			// x_copy it would give.
			par := parallelCopies(send, recv, size)
			ds := medianTimes(1, 1, 9, copies(dst, src), copies(devDst, devSrc), par, batch)
			cbw := float64(size*kc) / ds[0].Seconds() / 1e9
			dbw := float64(size*kc) / ds[1].Seconds() / 1e9
			op := ds[3] / time.Duration(k)
			bb := busbw(size, n, op)
			b.ReportMetric(float64(size)/op.Seconds()/1e9, "algbw_GB/s")
			b.ReportMetric(bb, "busbw_GB/s")
			b.ReportMetric(cbw, "copy_GB/s")
			b.ReportMetric(bb/cbw, "x_copy")
			b.ReportMetric(bb/dbw, "x_devcopy")
			b.ReportMetric(busbw(size, n, ds[2])/cbw, "xmax_copy")
		})
	}
}

// parallelCopies returns a function that copies every send buffer to
// the recv buffer of the same rank, the ranks dealt round-robin to
// GOMAXPROCS goroutines running at once.
func parallelCopies(send, recv []unsafe.Pointer, size int) func() {
	threads := min(len(send), runtime.GOMAXPROCS(0))
	return func() {
		var wg sync.WaitGroup
		for t := range threads {
			wg.Go(func() {
				for r := t; r < len(send); r += threads {
					copy(unsafe.Slice((*byte)(recv[r]), size), unsafe.Slice((*byte)(send[r]), size))
				}
			})
		}
		wg.Wait()
	}
}

// hcclProcs is n rank processes with a communicator.
type hcclProcs struct {
	cl    *procs.Cluster
	be    *procs.Backend
	s     []acl.StreamHandle
	hs    []hccl.CommHandle // the parent's handles (procs.Backend)
	local []hccl.CommHandle // each child's own handle
}

func openHCCLProcs(b *testing.B, n int) *hcclProcs {
	cl, err := procs.Start(procs.Options{Processes: n, Devices: n, ExecTimeout: time.Minute, ConnectTimeout: time.Minute,
		Args: []string{"-test.run=^TestHCCLRankProcess$", "-test.bench=^$"}})
	if err != nil {
		b.Fatal(err)
	}
	e := &hcclProcs{cl: cl, be: cl.Backend()}
	for i := 0; i < n; i++ {
		s, err := cl.Proc(i).OpenRank(int32(i))
		if err != nil {
			b.Fatal(err)
		}
		e.s = append(e.s, s)
	}
	root, err := e.be.GetRootInfo()
	if err != nil {
		b.Fatal(err)
	}
	hs := make([]hccl.CommHandle, n)
	if err := e.each(func(r int, p *procs.Proc) error {
		var err error
		hs[r], err = e.be.CommInitRootInfo(uint32(n), &root, uint32(r))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	e.hs = hs
	for _, h := range hs {
		_, lh, _ := e.be.Local(h)
		e.local = append(e.local, lh)
	}
	return e
}

func (e *hcclProcs) each(f func(r int, p *procs.Proc) error) error {
	errs := make([]error, e.cl.Procs())
	var wg sync.WaitGroup
	for r := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = f(r, e.cl.Proc(r)) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *hcclProcs) close(b *testing.B) {
	if err := e.cl.Close(); err != nil {
		b.Error(err)
	}
}

func benchAllReduceProcs(b *testing.B, n int) {
	e := openHCCLProcs(b, n)
	defer e.close(b)
	for _, size := range hcclSizes {
		b.Run("size="+hcclSizeName(size), func(b *testing.B) {
			send, recv := make([]uintptr, n), make([]uintptr, n)
			if err := e.each(func(r int, p *procs.Proc) error {
				var err error
				if send[r], err = p.Alloc(uint64(size)); err != nil {
					return err
				}
				recv[r], err = p.Alloc(uint64(size))
				return err
			}); err != nil {
				b.Fatal(err)
			}
			defer func() {
				_ = e.each(func(r int, p *procs.Proc) error { _ = p.Free(send[r]); return p.Free(recv[r]) })
			}()
			// Batches amortise the request pipe; time is the slowest rank's.
			iters := max(1, (16<<20)/size/8)
			var total time.Duration
			ops := 0
			loop := func() {
				ds := make([]time.Duration, n)
				if err := e.each(func(r int, p *procs.Proc) error {
					var err error
					ds[r], err = p.LoopAllReduce(e.local[r], e.s[r], send[r], recv[r], uint64(size/4), hccl.Float32, hccl.Sum, iters)
					return err
				}); err != nil {
					b.Fatal(err)
				}
				total += slices.Max(ds)
				ops += iters
			}
			loop() // warm
			total, ops = 0, 0
			b.SetBytes(int64(size * iters))
			b.ReportAllocs()
			for b.Loop() {
				loop()
			}
			d := total / time.Duration(ops)
			cbw, _ := copyAndOp(size, func() {})
			bb := busbw(size, n, d)
			b.ReportMetric(float64(size)/d.Seconds()/1e9, "algbw_GB/s")
			b.ReportMetric(bb, "busbw_GB/s")
			b.ReportMetric(cbw, "copy_GB/s")
			b.ReportMetric(bb/cbw, "x_copy")
		})
	}
}

// batchGetCases are the read sizes of BenchmarkHCCLBatchGet and how many
// reads one BatchGet carries.
var batchGetCases = []struct {
	name        string
	size, reads int
}{
	{"64B", 64, 16384}, {"160B", 160, 16384}, {"64KiB", 64 << 10, 256}, {"1MiB", 1 << 20, 16},
}

const batchGetTable = 64 << 20 // the peer's registered memory

// batchGetDescs spreads reads of size bytes over the table at random row
// offsets, into consecutive local slots.
func batchGetDescs(local unsafe.Pointer, remote uintptr, size, reads int) []hccl.OneSideOpDesc {
	r := rand.New(rand.NewPCG(uint64(size), uint64(reads)))
	ds := make([]hccl.OneSideOpDesc, reads)
	for i := range ds {
		off := r.IntN(batchGetTable/size) * size
		ds[i] = hccl.OneSideOpDesc{LocalAddr: unsafe.Add(local, i*size), RemoteAddr: remote + uintptr(off),
			Count: uint64(size), DataType: hccl.Uint8}
	}
	return ds
}

// reportReads reports Mreads/s and GB/s of one batch of reads of size
// bytes taking d.
func reportReads(b *testing.B, size, reads int, d time.Duration) {
	b.ReportMetric(float64(reads)/d.Seconds()/1e6, "Mreads/s")
	b.ReportMetric(float64(size*reads)/d.Seconds()/1e9, "GB/s")
}

// BenchmarkHCCLBatchGet: see the file comment. Rank 0 reads rank 1's
// 64 MiB registered table; each op is the BatchGets (at most 256
// descriptors each, HCCL's limit) of many reads plus the
// stream synchronize that completes it.
func BenchmarkHCCLBatchGet(b *testing.B) {
	b.Run("inproc", benchBatchGetInProc)
	b.Run("procs", benchBatchGetProcs)
}

func benchBatchGetInProc(b *testing.B) {
	e := openHCCLInProc(b, 2, batchGetTable+32<<20)
	defer e.close()
	var table, local unsafe.Pointer
	var desc hccl.MemDesc
	err := e.each(func(r int, w *hcclWorker) error {
		var err error
		if r == 1 {
			if table, err = e.npu.Malloc(batchGetTable, acl.MemMallocHugeFirst); err != nil {
				return err
			}
			if err := e.fill(table, batchGetTable, 3); err != nil {
				return err
			}
			desc, err = e.sim.RegisterMem(w.comm, 0, hccl.MemDevice, table, batchGetTable)
			if err != nil {
				return err
			}
		} else if local, err = e.npu.Malloc(16<<20, acl.MemMallocHugeFirst); err != nil {
			return err
		}
		local := []hccl.MemDesc{desc}
		if r == 0 {
			local = nil
		}
		got := make([]hccl.MemDesc, 1)
		_, err = e.sim.ExchangeMemDesc(w.comm, uint32(1-r), local, 0, got)
		if r == 0 && err == nil {
			desc = got[0]
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	w0 := e.ws[0]
	var mem hccl.CommMem
	w0.do(func() { mem, err = e.sim.EnableMemAccess(w0.comm, &desc) })
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range batchGetCases {
		b.Run(c.name, func(b *testing.B) {
			ds := batchGetDescs(local, mem.Addr, c.size, c.reads)
			op := func() {
				w0.do(func() {
					err = nil
					// HCCL takes at most MaxOneSideDescs descriptors per batch.
					for lo := 0; lo < len(ds) && err == nil; lo += hccl.MaxOneSideDescs {
						err = e.sim.BatchGet(w0.comm, 1, ds[lo:min(len(ds), lo+hccl.MaxOneSideDescs)], w0.s)
					}
					if err == nil {
						err = e.npu.SynchronizeStream(w0.s)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			op()
			b.SetBytes(int64(c.size * c.reads))
			b.ReportAllocs()
			for b.Loop() {
				op()
			}
			cbw, d := copyAndOp(c.size*c.reads, op)
			reportReads(b, c.size, c.reads, d)
			if c.size >= 64<<10 {
				b.ReportMetric(float64(c.size*c.reads)/d.Seconds()/1e9/cbw, "x_copy")
			}
		})
	}
}

// hcclForeign turns an address in a rank process into an opaque pointer
// value; this process never dereferences it.
func hcclForeign(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

func benchBatchGetProcs(b *testing.B) {
	e := openHCCLProcs(b, 2)
	defer e.close(b)
	p0, p1 := e.cl.Proc(0), e.cl.Proc(1)
	table, err := p1.Alloc(batchGetTable)
	if err != nil {
		b.Fatal(err)
	}
	if err := p1.Write(table, make([]byte, batchGetTable)); err != nil {
		b.Fatal(err)
	}
	local, err := p0.Alloc(16 << 20)
	if err != nil {
		b.Fatal(err)
	}
	desc, err := e.be.RegisterMem(e.hs[1], 0, hccl.MemDevice, hcclForeign(table), batchGetTable)
	if err != nil {
		b.Fatal(err)
	}
	got := make([]hccl.MemDesc, 1)
	if err := e.each(func(r int, p *procs.Proc) error {
		if r == 1 {
			_, err := e.be.ExchangeMemDesc(e.hs[1], 0, []hccl.MemDesc{desc}, 0, make([]hccl.MemDesc, 1))
			return err
		}
		_, err := e.be.ExchangeMemDesc(e.hs[0], 1, nil, 0, got)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	mem, err := e.be.EnableMemAccess(e.hs[0], &got[0])
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range batchGetCases {
		b.Run(c.name, func(b *testing.B) {
			ds := batchGetDescs(hcclForeign(local), mem.Addr, c.size, c.reads)
			// Batches amortise the request pipe; the child times them.
			iters := 8
			var total time.Duration
			ops := 0
			loop := func() {
				d, err := p0.LoopBatchGet(e.local[0], e.s[0], 1, ds, iters)
				if err != nil {
					b.Fatal(err)
				}
				total += d
				ops += iters
			}
			loop()
			total, ops = 0, 0
			b.SetBytes(int64(c.size * c.reads * iters))
			b.ReportAllocs()
			for b.Loop() {
				loop()
			}
			d := total / time.Duration(ops)
			reportReads(b, c.size, c.reads, d)
			if c.size >= 64<<10 {
				cbw, _ := copyAndOp(c.size*c.reads, func() {})
				b.ReportMetric(float64(c.size*c.reads)/d.Seconds()/1e9/cbw, "x_copy")
			}
		})
	}
}
