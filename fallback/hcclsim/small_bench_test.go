package hcclsim_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/hccl"
)

// BenchmarkSmallCollectives measures the small collectives of a training
// step (Engram's count and verdict exchanges): in-process AllReduce and
// AlltoAllV of ≤ 4 KiB on 2–4 ranks. Each rank's goroutine (locked to its
// OS thread, as an ACL caller is) issues and synchronises b.N collectives
// back to back, so ns/op is the latency of one collective as a training
// loop sees it. x_handoff is the ratio to one goroutine hand-off round
// trip (an unbuffered channel send and reply) measured in the same run;
// x_locked to the same round trip with one side locked to its OS thread,
// which is what waking a parked ACL caller costs. Per rank and collective:
// inline/op is the share of stream tasks the synchronizing caller ran
// itself (fallback Counters.InlineTasks), syncparks/op the synchronizes
// that slept, roundparks/op the sleeps in the collective's rendezvous;
// each sleep is a wake-up of a thread later.
//
// With more ranks than processors (4 ranks, GOMAXPROCS 2) every
// collective needs each rank's locked thread to run, so at least two
// locked threads are switched in per processor per collective: about one
// x_locked round trip is this machine's floor there, however the ranks
// wait.
func BenchmarkSmallCollectives(b *testing.B) {
	handoff, locked := measureHandoff(false), measureHandoff(true)
	for _, ranks := range []int{2, 4} {
		for _, bytes := range []int{64, 1024, 4096} {
			for _, op := range []string{"AllReduce", "AlltoAllV"} {
				b.Run(fmt.Sprintf("%s/ranks=%d/bytes=%d", op, ranks, bytes), func(b *testing.B) {
					npu, err := fallback.New(fallback.WithDevices(ranks), fallback.WithDeviceMemory(16<<20))
					if err != nil {
						b.Fatal(err)
					}
					if err := npu.Init(""); err != nil {
						b.Fatal(err)
					}
					sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: 30 * time.Second})
					b.Cleanup(func() { _ = sim.Close(); _ = npu.Close() })
					devs := make([]int32, ranks)
					for r := range devs {
						devs[r] = int32(r)
					}
					hs, err := sim.CommInitAll(devs)
					if err != nil {
						b.Fatal(err)
					}
					type st struct {
						s    acl.StreamHandle
						x, y unsafe.Pointer
					}
					sts := make([]st, ranks)
					br := newBenchRanks(b, npu, ranks)
					br.all(b, func(r int) error {
						var err error
						if sts[r].s, err = npu.CreateStream(); err != nil {
							return err
						}
						if sts[r].x, err = npu.Malloc(uintptr(bytes), acl.MemMallocHugeFirst); err != nil {
							return err
						}
						sts[r].y, err = npu.Malloc(uintptr(bytes), acl.MemMallocHugeFirst)
						return err
					})
					per := uint64(bytes / 4 / ranks)
					counts, displs := make([]uint64, ranks), make([]uint64, ranks)
					for r := range counts {
						counts[r], displs[r] = per, uint64(r)*per
					}
					step := func(r int) error {
						var err error
						if op == "AllReduce" {
							err = sim.AllReduce(sts[r].x, sts[r].y, uint64(bytes/4), hccl.Float32, hccl.Sum, hs[r], sts[r].s)
						} else {
							err = sim.AlltoAllV(sts[r].x, counts, displs, hccl.Float32, sts[r].y, counts, displs, hccl.Float32, hs[r], sts[r].s)
						}
						if err != nil {
							return err
						}
						return npu.SynchronizeStream(sts[r].s)
					}
					br.all(b, step)
					b.ReportAllocs()
					c0, p0 := npu.Counters(), hcclsim.RoundParks()
					b.ResetTimer()
					br.all(b, func(r int) error {
						for range b.N {
							if err := step(r); err != nil {
								return err
							}
						}
						return nil
					})
					b.StopTimer()
					c1, p1 := npu.Counters(), hcclsim.RoundParks()
					calls := float64(b.N * ranks) // per rank and collective
					b.ReportMetric(float64(c1.InlineTasks-c0.InlineTasks)/calls, "inline/op")
					b.ReportMetric(float64(c1.SyncParks-c0.SyncParks)/calls, "syncparks/op")
					b.ReportMetric(float64(p1-p0)/calls, "roundparks/op")
					ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					b.ReportMetric(ns/1e3, "µs/op")
					b.ReportMetric(ns/float64(handoff.Nanoseconds()), "x_handoff")
					b.ReportMetric(ns/float64(locked.Nanoseconds()), "x_locked")
				})
			}
		}
	}
}

// measureHandoff is the mean round trip of a goroutine hand-off; with
// lockThread the replying goroutine is locked to its OS thread.
func measureHandoff(lockThread bool) time.Duration {
	req, rep := make(chan struct{}), make(chan struct{})
	go func() {
		if lockThread {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		for range req {
			rep <- struct{}{}
		}
	}()
	defer close(req)
	const n = 20000
	t0 := time.Now()
	for range n {
		req <- struct{}{}
		<-rep
	}
	return time.Since(t0) / n
}
