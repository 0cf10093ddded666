package gert

import (
	"testing"
	"unsafe"
)

// BenchmarkSetDataMove moves owned data into a tensor and back out: an
// ownership move is a few stores, with no allocation and no copy of the data.
func BenchmarkSetDataMove(b *testing.B) {
	buf := make([]byte, 1<<20)
	m := NewRefCounted(nil)
	src := NewTensorData(unsafe.Pointer(&buf[0]), uint64(len(buf)), OnDeviceHbm, m)
	t := NewTensor(Shape{1 << 18}, 0, OnDeviceHbm)
	back := &TensorData{}
	b.ReportAllocs()
	for b.Loop() {
		if err := t.SetData(src); err != nil {
			b.Fatal(err)
		}
		if err := back.MoveFrom(t.Data()); err != nil {
			b.Fatal(err)
		}
		src, back = back, src
	}
	if !src.Held() {
		b.Fatal("the data was lost on the way")
	}
}
