package gert_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/gert"
)

// BenchmarkExecute compares a zero-copy V2 execution (device output used in
// place) with one whose output is on the host (a staging buffer and a D2H
// copy), and reports copies per execution and allocations.
func BenchmarkExecute(b *testing.B) {
	f := newFixture(b, gert.LoweringOptions{})
	x, y := f.deviceTensor(b, make([]float32, addN)), f.deviceTensor(b, make([]float32, addN))
	zd := f.deviceTensor(b, make([]float32, addN))
	host := make([]float32, addN)
	zh := gert.NewTensor(gert.Shape{addN}, acl.Float32, gert.OnHost)
	require.NoError(b, zh.SetData(gert.NewTensorData(unsafe.Pointer(&host[0]), 4*addN, gert.OnHost, nil)))
	in := []*gert.Tensor{x, y}
	for _, c := range []struct {
		name string
		out  *gert.Tensor
	}{{"zerocopy", zd}, {"hostcopy", zh}} {
		b.Run(c.name, func(b *testing.B) {
			out := []*gert.Tensor{c.out}
			b.ReportAllocs()
			c0 := f.ex.Stats().Copies
			n := 0
			for b.Loop() {
				if err := f.ex.Execute(f.s, in, out, nil); err != nil {
					b.Fatal(err)
				}
				if err := f.s.Synchronize(); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(f.ex.Stats().Copies-c0)/float64(n), "copies/op")
		})
	}
}
