package hcclsim_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
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
// AlltoAllV of ≤ 4 KiB on 2–4 ranks, every rank issuing and synchronising
// b.N collectives back to back, so ns/op is the latency of one collective
// as a training loop sees it. Two paths:
//
//   - path=acl: what a program of this SDK runs: hccl.Comm on an
//     acl.Stream, Comm.AllReduce/AlltoAllV and Stream.Synchronize from
//     plain goroutines. acl binds each call to the device context (the
//     goroutine is locked to its OS thread only for the call) and waits
//     for the stream unbound (acl.StreamDrainer), so ranks meeting in
//     the collective switch goroutines.
//   - path=locked: raw backend calls from goroutines locked to their OS
//     threads for the whole run, as a C caller is; every wait is then a
//     hand-off of a locked thread.
//
// x_handoff is the ratio to one goroutine hand-off round trip (an
// unbuffered channel send and reply) measured in the same run; x_locked to
// the same round trip with one side locked to its OS thread, which is what
// waking a parked locked caller costs. Per rank and collective: inline/op
// is the share of stream tasks the synchronizing caller ran itself
// (fallback Counters.InlineTasks), syncparks/op the synchronizes that
// slept, roundparks/op the sleeps in the collective's rendezvous.
//
// With more locked ranks than processors (path=locked, 4 ranks,
// GOMAXPROCS 2) every collective needs each rank's thread to run, so at
// least two locked threads are switched in per processor per collective:
// about one x_locked round trip is the floor of that path.
func BenchmarkSmallCollectives(b *testing.B) {
	handoff, locked := measureHandoff(false), measureHandoff(true)
	for _, path := range []string{"acl", "locked"} {
		for _, ranks := range []int{2, 4} {
			for _, bytes := range []int{64, 1024, 4096} {
				for _, op := range []string{"AllReduce", "AlltoAllV"} {
					b.Run(fmt.Sprintf("path=%s/%s/ranks=%d/bytes=%d", path, op, ranks, bytes), func(b *testing.B) {
						bench := benchSmallLocked
						if path == "acl" {
							bench = benchSmallACL
						}
						npu, err := fallback.New(fallback.WithDevices(ranks), fallback.WithDeviceMemory(16<<20))
						if err != nil {
							b.Fatal(err)
						}
						sim := hcclsim.New(npu, hcclsim.Options{ExecTimeout: 30 * time.Second})
						b.Cleanup(func() { _ = sim.Close(); _ = npu.Close() })
						per := uint64(bytes / 4 / ranks)
						counts, displs := make([]uint64, ranks), make([]uint64, ranks)
						for r := range counts {
							counts[r], displs[r] = per, uint64(r)*per
						}
						c0, p0 := npu.Counters(), hcclsim.RoundParks()
						bench(b, npu, sim, ranks, bytes, op, counts, displs)
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
}

// benchSmallACL is path=acl: the timed loop runs on plain goroutines
// through the acl and hccl packages.
func benchSmallACL(b *testing.B, npu *fallback.NPU, sim *hcclsim.Sim, ranks, bytes int, op string, counts, displs []uint64) {
	rt, err := acl.Init(npu, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	type st struct {
		d    *acl.Device
		s    *acl.Stream
		c    *hccl.Comm
		x, y *acl.DeviceBuffer
	}
	sts := make([]st, ranks)
	for r := range sts {
		rs := &sts[r]
		if rs.d, err = rt.OpenDevice(int32(r)); err != nil {
			b.Fatal(err)
		}
		if rs.s, err = rs.d.NewStream(); err != nil {
			b.Fatal(err)
		}
		if rs.x, err = rs.d.Malloc(uintptr(bytes), acl.MemMallocHugeFirst); err != nil {
			b.Fatal(err)
		}
		if rs.y, err = rs.d.Malloc(uintptr(bytes), acl.MemMallocHugeFirst); err != nil {
			b.Fatal(err)
		}
	}
	root, err := sim.GetRootInfo()
	if err != nil {
		b.Fatal(err)
	}
	all := func(f func(r int) error) {
		errs := make([]error, ranks)
		var wg sync.WaitGroup
		for r := range ranks {
			wg.Go(func() { errs[r] = f(r) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
	}
	all(func(r int) error {
		var err error
		sts[r].c, err = hccl.InitRootInfo(sim, &root, ranks, r, hccl.OnStream(sts[r].s))
		return err
	})
	b.Cleanup(func() {
		for _, rs := range sts {
			_ = rs.c.Close()
		}
	})
	ctx := context.Background()
	step := func(r int) error {
		rs := &sts[r]
		var err error
		if op == "AllReduce" {
			err = rs.c.AllReduce(ctx, rs.x.Ptr(), rs.y.Ptr(), uint64(bytes/4), hccl.Float32, hccl.Sum)
		} else {
			err = rs.c.AlltoAllV(ctx, rs.x.Ptr(), counts, displs, hccl.Float32, rs.y.Ptr(), counts, displs, hccl.Float32)
		}
		if err != nil {
			return err
		}
		return rs.s.Synchronize()
	}
	all(step)
	b.ReportAllocs()
	b.ResetTimer()
	all(func(r int) error {
		for range b.N {
			if err := step(r); err != nil {
				return err
			}
		}
		return nil
	})
	b.StopTimer()
}

// benchSmallLocked is path=locked: raw backend calls from goroutines
// locked to their OS threads.
func benchSmallLocked(b *testing.B, npu *fallback.NPU, sim *hcclsim.Sim, ranks, bytes int, op string, counts, displs []uint64) {
	if err := npu.Init(""); err != nil {
		b.Fatal(err)
	}
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
