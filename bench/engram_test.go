package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
	"github.com/ascend-go/cann/internal/engramjob"
)

// Engram benchmarks (package engram), in process and across processes:
//
//   - BenchmarkEngramFetch: every rank of an in-process world (W = 2, 4, 8)
//     fetches engramT rows at once into reused device buffers (the steady
//     state of a serving loop), rows of 64, 128, 160 and 2560 bytes,
//     uniform and Zipf(1.05) indices over a table of 2^14 rows per rank.
//     Reports GB/s and Mrows/s of the whole world, and x_gather: the
//     world's fetch time against a single-thread Go gather (copy of each
//     of the same rows into a packed buffer), timed in alternating batches
//     in the same run (medianTimes).
//   - BenchmarkEngramFetchProcesses: the same with every rank its own
//     process (W = 2, 4; 2^12 rows per rank); one benchmark iteration is one job of
//     engramIters fetches per rank. Reports per-rank GB/s, Mrows/s and
//     heap allocations per fetch.

var engramRows = []int{64, 128, 160, 2560}

const (
	engramT       = 4096 // indices per rank per fetch
	engramEntries = 1 << 14
	engramIters   = 10
	// Rank processes build their slices themselves: a smaller table keeps
	// a job (one benchmark iteration) short.
	engramProcEntries = 1 << 12
)

func engramIndices(rng *rand.Rand, dist string, global int64) []int32 {
	if dist == "zipf" {
		return engramjob.Zipf(rng, engramT, global, 1.05)
	}
	return engramjob.Uniform(rng, engramT, global)
}

func BenchmarkEngramFetch(b *testing.B) {
	for _, w := range []int{2, 4, 8} {
		for _, rb := range engramRows {
			for _, dist := range []string{"uniform", "zipf"} {
				b.Run(fmt.Sprintf("W=%d/row=%d/%s", w, rb, dist), func(b *testing.B) { benchEngramInProc(b, w, rb, dist) })
			}
		}
	}
}

// engramWorld is w ranks as devices of one fallback NPU, one Buffer each,
// every rank driven by its own goroutine started once (a fetch step is a
// channel send per rank: no allocation).
type engramWorld struct {
	npu   *fallback.NPU
	sim   *hcclsim.Sim
	rt    *acl.Runtime
	devs  []*acl.Device
	ss    []*acl.Stream
	comms []*hccl.Comm
	bufs  []*engram.Buffer
	start []chan struct{}
	done  chan error
}

func (e *engramWorld) each(f func(r int) error) error {
	errs := make([]error, len(e.devs))
	var wg sync.WaitGroup
	for r := range e.devs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = f(r) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func openEngramWorld(b *testing.B, w int, cfg engram.Config) *engramWorld {
	npu, err := fallback.New(fallback.WithDevices(w), fallback.WithDeviceMemory(256<<20), fallback.WithHostMemory(1<<30))
	if err != nil {
		b.Fatal(err)
	}
	rt, err := acl.Init(npu, "")
	if err != nil {
		b.Fatal(err)
	}
	e := &engramWorld{npu: npu, rt: rt, sim: hcclsim.New(npu, hcclsim.Options{ExecTimeout: time.Minute, ConnectTimeout: time.Minute}),
		comms: make([]*hccl.Comm, w), bufs: make([]*engram.Buffer, w), done: make(chan error, w)}
	b.Cleanup(e.close)
	for r := 0; r < w; r++ {
		d, err := rt.OpenDevice(int32(r))
		if err != nil {
			b.Fatal(err)
		}
		s, err := d.NewStream()
		if err != nil {
			b.Fatal(err)
		}
		e.devs, e.ss = append(e.devs, d), append(e.ss, s)
	}
	root, err := e.sim.GetRootInfo()
	if err != nil {
		b.Fatal(err)
	}
	if err := e.each(func(r int) error {
		return e.devs[r].Do(func() error {
			c, err := hccl.InitRootInfo(e.sim, &root, w, r, hccl.WithStream(e.ss[r].Handle()), hccl.WithDevice(int32(r)))
			e.comms[r] = c
			return err
		})
	}); err != nil {
		b.Fatal(err)
	}
	for r := range e.bufs {
		if e.bufs[r], err = engram.New(e.comms[r], e.devs[r], cfg); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

func (e *engramWorld) run(fetch func(r int) error) {
	e.start = make([]chan struct{}, len(e.devs))
	for r := range e.start {
		e.start[r] = make(chan struct{})
		go func() {
			for range e.start[r] {
				e.done <- fetch(r)
			}
		}()
	}
}

func (e *engramWorld) step() error {
	for _, ch := range e.start {
		ch <- struct{}{}
	}
	var errs []error
	for range e.start {
		errs = append(errs, <-e.done)
	}
	return errors.Join(errs...)
}

func (e *engramWorld) close() {
	for _, ch := range e.start {
		close(ch)
	}
	_ = e.each(func(r int) error { return e.bufs[r].Destroy() })
	for r, c := range e.comms {
		if c != nil {
			_ = e.devs[r].Do(c.Close)
		}
	}
	_ = e.sim.Close()
	_ = e.rt.Close()
	_ = e.npu.Close()
}

func benchEngramInProc(b *testing.B, w, rb int, dist string) {
	cfg := engram.Config{EntriesPerRank: engramEntries, Hidden: rb / 2, DType: engram.BF16}
	cfg.Capacity = (engramEntries*cfg.RowBytes() + engram.CapacityAlign - 1) / engram.CapacityAlign * engram.CapacityAlign
	e := openEngramWorld(b, w, cfg)
	tab := make([][]byte, w)
	rng := rand.New(rand.NewPCG(1, 2))
	for r := range tab {
		tab[r] = make([]byte, engramEntries*int64(rb))
		for i := range tab[r] {
			tab[r][i] = byte(rng.Uint32())
		}
	}
	ctx := context.Background()
	if err := e.each(func(r int) error { return e.bufs[r].Write(ctx, engram.Storage{Rows: tab[r]}) }); err != nil {
		b.Fatal(err)
	}
	idx := make([][]int32, w)
	outs := make([]engram.Output, w)
	for r := range idx {
		idx[r] = engramIndices(rand.New(rand.NewPCG(uint64(r), 3)), dist, int64(w)*engramEntries)
		d, err := e.devs[r].Malloc(uintptr(engramT*rb), acl.MemMallocHugeFirst)
		if err != nil {
			b.Fatal(err)
		}
		outs[r] = engram.Output{Rows: d}
	}
	e.run(func(r int) error {
		p, err := e.bufs[r].FetchInto(idx[r], outs[r], e.ss[r])
		if err == nil {
			_, err = p.Wait(ctx)
		}
		return err
	})
	if err := e.step(); err != nil { // warm the reused memory
		b.Fatal(err)
	}
	// Once per configuration, outside the timed loop: the fetch is
	// the gather (issue 26 item 5; on c5af455 the output was never read).
	checkEngramOutputs(b, tab, idx, outs, rb)
	// The baseline: the same rows gathered by one goroutine with copy()
	// into one packed buffer of all W·T rows, as large as the world's
	// outputs (a T-row buffer reused per rank would stay cache-resident
	// where the fetch's outputs cannot).
	out := make([]byte, w*engramT*rb)
	gather := func() {
		o := 0
		for _, ix := range idx {
			for _, g := range ix {
				r, k := int64(g)/engramEntries, int64(g)%engramEntries
				copy(out[o:o+rb], tab[r][k*int64(rb):(k+1)*int64(rb)])
				o += rb
			}
		}
	}
	bytesPerOp := int64(w) * engramT * int64(rb)
	b.SetBytes(bytesPerOp)
	b.ReportAllocs()
	for b.Loop() {
		if err := e.step(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	checkEngramOutputs(b, tab, idx, outs, rb) // and after the timed fetches
	med := medianTimes(int(bytesPerOp), 8<<20, 7, func() {
		if err := e.step(); err != nil {
			b.Fatal(err)
		}
	}, gather)
	b.ReportMetric(float64(bytesPerOp)/med[0].Seconds()/1e9, "GB/s")
	b.ReportMetric(float64(int64(w)*engramT)/med[0].Seconds()/1e6, "Mrows/s")
	b.ReportMetric(med[1].Seconds()/med[0].Seconds(), "x_gather")
	for _, o := range outs {
		_ = o.Rows.Close()
	}
}

// checkEngramOutputs compares every rank's fetched rows with the rows
// of its indices in the table.
func checkEngramOutputs(b *testing.B, tab [][]byte, idx [][]int32, outs []engram.Output, rb int) {
	b.Helper()
	got := make([]byte, engramT*rb)
	for r, ix := range idx {
		if err := outs[r].Rows.CopyToHostAt(got, 0); err != nil {
			b.Fatal(err)
		}
		for i, g := range ix {
			o, k := int64(g)/engramEntries, int64(g)%engramEntries
			if !bytes.Equal(got[i*rb:(i+1)*rb], tab[o][k*int64(rb):(k+1)*int64(rb)]) {
				b.Fatalf("rank %d token %d: the fetched row differs from row %d of the table", r, i, g)
			}
		}
	}
}

// TestEngramRankProcess is not a test: the multi-process Engram
// benchmarks start the test binary again with -test.run naming it, and it
// then serves as a rank process.
func TestEngramRankProcess(t *testing.T) {
	if !engramjob.IsRank() {
		t.Skip("only meaningful as a rank process of the Engram benchmarks")
	}
	os.Exit(engramjob.ServeRank(os.Stdout))
}

func BenchmarkEngramFetchProcesses(b *testing.B) {
	for _, w := range []int{2, 4} {
		for _, rb := range engramRows {
			for _, dist := range []string{"uniform", "zipf"} {
				b.Run(fmt.Sprintf("W=%d/row=%d/%s", w, rb, dist), func(b *testing.B) {
					j := engramjob.Job{Ranks: w, Entries: engramProcEntries, Hidden: rb / 2, DType: engram.BF16, T: engramT,
						Iters: engramIters, Seed: 1, Timeout: time.Minute}
					if dist == "zipf" {
						j.Zipf = 1.05
					}
					var gbs, mrows, allocs float64
					n := 0
					for b.Loop() {
						reps, err := engramjob.Launch(j, []string{"-test.run=^TestEngramRankProcess$"}, os.Stderr)
						if err != nil {
							b.Fatal(err)
						}
						for _, r := range reps {
							gbs += r.GBps()
							mrows += r.Mrows()
							allocs += r.Allocs
							n++
						}
					}
					b.ReportMetric(gbs/float64(n), "GB/s/rank")
					b.ReportMetric(mrows/float64(n), "Mrows/s/rank")
					b.ReportMetric(allocs/float64(n), "allocs/fetch")
				})
			}
		}
	}
}
