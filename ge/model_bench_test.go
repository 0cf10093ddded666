package ge_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// BenchmarkModel runs whole models task by task on memory resolved once,
// as the fallback's executor does, on one thread and on all of
// GOMAXPROCS, and compares them with the pre-issue-16 kernels (gonum
// SGEMM, float64 activations) measured in the same run:
//
//	ms_run           this run's time (see below for which clock)
//	ms_before_1core  the old kernels' time on one core
//	x_before         the old kernels at the same GOMAXPROCS over this
//	x_before_1core   the old kernels on one core (how issue 16 measured
//	                 "today") over this; on procs=1 it equals x_before
//	x_unfused        the same model compiled WithoutFusion, on the
//	                 current kernels, over this (the fusion pass's gain)
//
// The old kernels run the unfused model (the fused ops have no old
// kernel).
// Old and new runs alternate, so a change of load hits both alike. A
// one-core time is the process's CPU time per run (other processes' load
// does not add to it); an all-core time is the fastest wall-clock run
// (load only ever adds time). Without a CPU clock both are wall-clock.
func BenchmarkModel(b *testing.B) {
	r := rand.New(rand.NewPCG(16, 16))
	all := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		name string
		g    *ge.Graph
	}{
		// The quickstart-sized MLP of issue 16: x[64,1024], 270 MFLOP.
		{"MLP/64x1024x1024x1024x16", getest.MLP(r, acl.Float32, 64, 1024, 1024, 1024, 16)},
		// A transformer block on x[1,128,256], 218 MFLOP.
		{"Transformer/1x128x256", getest.TransformerBlock(r, acl.Float32, 1, 128, 256, 4)},
	} {
		m, err := ge.Compile(c.g)
		if err != nil {
			b.Fatal(err)
		}
		plain, err := ge.Compile(c.g, ge.WithoutFusion())
		if err != nil {
			b.Fatal(err)
		}
		run, unfused := resolve(m), resolve(plain)
		procs := []int{1}
		if all > 1 {
			procs = append(procs, all)
		}
		for _, p := range procs {
			b.Run(fmt.Sprintf("%s/procs=%d", c.name, p), func(b *testing.B) {
				benchModel(b, run, unfused, p)
			})
		}
	}
}

func benchModel(b *testing.B, run, unfused func() error, procs int) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	// timed runs the model once on threads threads and returns its wall
	// time and, when the CPU clock works and threads is 1, its CPU time:
	// the fused model, or (legacy, plain) the unfused one on the old or
	// the current kernels.
	timed := func(legacy bool, threads int, plain ...bool) (wall, cpu time.Duration) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
		f := run
		if legacy || len(plain) > 0 {
			f = unfused
		}
		if legacy {
			defer ge.UseLegacyKernels()()
		}
		c0, ok := processCPU()
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		wall = time.Since(start)
		if c1, ok1 := processCPU(); ok && ok1 && threads == 1 {
			cpu = c1 - c0
		}
		return wall, cpu
	}
	timed(false, procs) // warm the pools and caches
	const samples = 7
	var old1, old, cur, plain sample
	for range samples {
		old1.add(timed(true, 1))
		if procs > 1 {
			old.add(timed(true, procs))
		}
		plain.add(timed(false, procs, true))
		cur.add(timed(false, procs))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	now := cur.time()
	b.ReportMetric(now/1e6, "ms_run")
	b.ReportMetric(old1.time()/1e6, "ms_before_1core")
	b.ReportMetric(old1.time()/now, "x_before_1core")
	b.ReportMetric(plain.time()/now, "x_unfused")
	if procs > 1 {
		b.ReportMetric(old.time()/now, "x_before")
	} else {
		b.ReportMetric(old1.time()/now, "x_before")
	}
}

// sample collects the runs of one kind: fastest wall time, total CPU time.
type sample struct {
	n         int
	minWall   time.Duration
	cpu       time.Duration
	cpuBroken bool
}

func (s *sample) add(wall, cpu time.Duration) {
	if s.n == 0 || wall < s.minWall {
		s.minWall = wall
	}
	s.cpu += cpu
	s.cpuBroken = s.cpuBroken || cpu <= 0
	s.n++
}

// time is the sample's time per run in ns: mean CPU time where measured
// (one thread), else the fastest wall time.
func (s *sample) time() float64 {
	if !s.cpuBroken {
		return float64(s.cpu.Nanoseconds()) / float64(s.n)
	}
	return float64(s.minWall.Nanoseconds())
}

// resolve lays m out in one aligned arena with its weights and returns a
// function that runs every task once.
func resolve(m *ge.CompiledModel) func() error {
	arena := func(n int64) []byte {
		raw := make([]byte, n+ge.MemAlignSize)
		off := (ge.MemAlignSize - int(uintptr(unsafe.Pointer(&raw[0]))%ge.MemAlignSize)) % ge.MemAlignSize
		return raw[off : int64(off)+n]
	}
	mem, w := arena(m.MemorySize), arena(m.WeightSize)
	copy(w, m.Weights)
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range m.Inputs {
		in := getest.RandFloats(r, int(d.Size/4), 1)
		copy(mem[d.BasicOffset:], unsafe.Slice((*byte)(unsafe.Pointer(&in[0])), d.Size))
	}
	args := make([][][]byte, len(m.Tasks))
	for ti, t := range m.Tasks {
		for _, a := range t.Args {
			src := mem
			if a.Mem == ge.MemFixed {
				src = w
			}
			args[ti] = append(args[ti], src[a.Offset:a.Offset+a.Size])
		}
	}
	// Kernels are called directly, as the fallback's executor does (the
	// tasks were validated at compile time; ge.RunTask would validate them
	// again at every run). KernelFor is asked per run so that
	// UseLegacyKernels takes effect.
	return func() error {
		for ti := range m.Tasks {
			if err := ge.KernelFor(m.Tasks[ti].Op)(&m.Tasks[ti], args[ti]); err != nil {
				return err
			}
		}
		return nil
	}
}
