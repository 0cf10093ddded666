package sgemm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func zzCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZConvCPU(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := Conv{N: 1, C: 64, H: 56, W: 56, K: 64, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1}
	r := rand.New(rand.NewPCG(1, 2))
	x, w := randSlice(r, p.C*p.H*p.W), randSlice(r, p.K*p.C*p.R*p.S)
	oh, ow := p.ConvOut()
	y := make([]float32, p.K*oh*ow)
	flops := 2 * float64(p.K*p.C*p.R*p.S*oh*ow)
	_ = Conv2D(p, x, w, nil, y)
	c0 := zzCPU()
	const n = 20
	for range n {
		_ = Conv2D(p, x, w, nil, y)
	}
	d := (zzCPU() - c0) / n
	pr := newProblem(r, F32, 64, 1024, 1024, false, false, 0, 1, 0)
	c0 = zzCPU()
	for range n {
		_ = GemmThreads(&pr.Call, 1)
	}
	d2 := (zzCPU() - c0) / n
	loop, per := PeakLoop()
	c0 = zzCPU()
	loop(1 << 24)
	pk := float64(per) * (1 << 24) / float64((zzCPU() - c0).Nanoseconds())
	fmt.Printf("conv %v %.1f GF (%.0f%% of %.0f)  gemm64x1024x1024 %v %.1f GF (%.0f%%)\n", d, flops/float64(d.Nanoseconds()), 100*flops/float64(d.Nanoseconds())/pk, pk,
		d2, 2*64*1024*1024/float64(d2.Nanoseconds()), 100*2*64*1024*1024/float64(d2.Nanoseconds())/pk)
}
