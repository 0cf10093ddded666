package ge

import (
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// TestHotKernelsDoNotAllocate: after a warm-up run, the kernels on the
// hot path of the corpus models run with no Go heap allocation on one
// thread (the steady state a deployed model is in): convolution
// (implicit GEMM, depthwise, transposed), pooling, the activations,
// broadcast arithmetic, BatchNorm, batched MatMul, Transpose, Slice, Pad,
// Where, reductions, Resize and the recurrent ops.
func TestHotKernelsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	f32 := func(d ...int64) TensorDesc { return TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: d} }
	ints := func(v ...int64) Attr { return IntsAttr(v) }
	pads1 := ints(1, 1, 1, 1)
	cases := []struct {
		name  string
		op    OpType
		in    []TensorDesc
		attrs Attrs
	}{
		{"conv", OpConv, []TensorDesc{f32(2, 8, 12, 10), f32(16, 8, 3, 3), f32(16)}, Attrs{AttrPads: pads1}},
		{"depthwise", OpConv, []TensorDesc{f32(2, 8, 12, 10), f32(8, 1, 3, 3)}, Attrs{AttrPads: pads1, AttrGroups: IntAttr(8)}},
		{"convtranspose", OpConvTranspose, []TensorDesc{f32(1, 4, 6, 6), f32(4, 2, 2, 2)}, Attrs{AttrStrides: ints(2, 2)}},
		{"maxpool", OpMaxPool, []TensorDesc{f32(2, 8, 12, 10)}, Attrs{AttrKernelShape: ints(2, 2), AttrStrides: ints(2, 2)}},
		{"globalavg", OpAvgPool, []TensorDesc{f32(2, 8, 12, 10)}, Attrs{AttrKernelShape: ints(12, 10)}},
		{"hardswish", OpHardSwish, []TensorDesc{f32(2, 8, 12, 10)}, nil},
		{"hardsigmoid", OpHardSigmoid, []TensorDesc{f32(2, 8, 12, 10)}, nil},
		{"sigmoid", OpSigmoid, []TensorDesc{f32(2, 8, 12, 10)}, nil},
		{"erf", OpErf, []TensorDesc{f32(2, 8, 12, 10)}, nil},
		{"mul-se", OpMul, []TensorDesc{f32(2, 8, 12, 10), f32(2, 8, 1, 1)}, nil},
		{"add", OpAdd, []TensorDesc{f32(2, 8, 12, 10), f32(2, 8, 12, 10)}, nil},
		{"pow2", OpPow, []TensorDesc{f32(2, 5, 16), f32()}, nil},
		{"batchnorm", OpBatchNorm, []TensorDesc{f32(2, 8, 12, 10), f32(8), f32(8), f32(8), f32(8)}, nil},
		{"matmul-heads", OpMatMul, []TensorDesc{f32(2, 4, 17, 8), f32(2, 4, 8, 17)}, nil},
		{"transpose", OpTranspose, []TensorDesc{f32(2, 17, 4, 8)}, Attrs{AttrPerm: ints(0, 2, 1, 3)}},
		{"slice", OpSlice, []TensorDesc{f32(2, 17, 32)}, Attrs{AttrBegin: ints(0, 1, 0), AttrSize: ints(2, 16, 32)}},
		{"pad", OpPad, []TensorDesc{f32(1, 3, 8, 8)}, Attrs{AttrPads: ints(0, 0, 1, 1, 0, 0, 1, 1), AttrMode: StringAttr("reflect")}},
		{"where", OpWhere, []TensorDesc{{DataType: acl.Bool, Format: acl.FormatND, Dims: []int64{1, 1, 17, 17}}, f32(2, 4, 17, 17), f32()}, nil},
		{"reducemean-last", OpReduceMean, []TensorDesc{f32(2, 17, 32)}, Attrs{AttrAxes: ints(-1), AttrKeepDims: BoolAttr(true)}},
		{"reducemean-hw", OpReduceMean, []TensorDesc{f32(2, 6, 5, 8)}, Attrs{AttrAxes: ints(1, 2), AttrKeepDims: BoolAttr(true)}},
		{"resize", OpResize, []TensorDesc{f32(1, 3, 4, 5)}, Attrs{AttrResizeSizes: ints(1, 3, 8, 10), AttrResizeScales: StringAttr("1 1 2 2"), AttrResizeMode: StringAttr("linear")}},
		{"lstm", OpLSTM, []TensorDesc{f32(5, 2, 6), f32(1, 64, 6), f32(1, 64, 16), f32(1, 128), f32(1, 2, 16), f32(1, 2, 16), f32(1, 48)}, Attrs{AttrHiddenSize: IntAttr(16)}},
		{"less-scalar", OpLess, []TensorDesc{f32(), f32()}, nil},
		{"greater-row", OpGreater, []TensorDesc{f32(4, 17), f32()}, nil},
		{"equal-int64", OpEqual, []TensorDesc{{DataType: acl.Int64, Format: acl.FormatND, Dims: []int64{}}, {DataType: acl.Int64, Format: acl.FormatND}}, nil},
		{"gru-packed", OpGRU, []TensorDesc{f32(5, 2, 6), f32(1, 192, 6), f32(1, 192, 64), f32(1, 384), f32(1, 2, 64)}, Attrs{AttrHiddenSize: IntAttr(64)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := opSpecs[c.op]
			out, err := spec.infer(c.in, c.attrs)
			if err != nil {
				t.Fatal(err)
			}
			task := &Task{Op: c.op, Name: c.name, Attrs: c.attrs, Inputs: c.in, Outputs: out}
			var args [][]byte
			for _, d := range append(append([]TensorDesc(nil), c.in...), out...) {
				args = append(args, alignedBytes(int(d.Size())))
			}
			if spec.workspace != nil {
				for _, n := range spec.workspace(c.in, out, c.attrs) {
					args = append(args, alignedBytes(int(n)))
				}
			}
			for i, d := range c.in { // small positive values: valid for every op
				if d.DataType == acl.Float32 {
					v := unsafe.Slice((*float32)(unsafe.Pointer(&args[i][0])), len(args[i])/4)
					for j := range v {
						v[j] = 0.25 + float32(j%7)/8
					}
				}
			}
			run := func() {
				if err := spec.kernel(task, args); err != nil {
					t.Fatal(err)
				}
			}
			run()
			if n := testing.AllocsPerRun(20, run); n != 0 {
				t.Errorf("%s allocates %v times per run", c.name, n)
			}
		})
	}
}

// alignedBytes is n bytes (at least 8) 8-byte aligned, as device memory is.
func alignedBytes(n int) []byte {
	w := make([]uint64, (max(n, 8)+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), max(n, 8))[:n:n]
}
