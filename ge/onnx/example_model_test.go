package onnx_test

import (
	"context"
	"fmt"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/onnx"
)

// A model exported with a symbolic batch dim is loaded once and run at
// two batch sizes; each shape gets its own compiled plan.
func ExampleLoad() {
	m, err := onnx.Load(symbolicMLP()) // x[N,4] → Relu(x·W + b) → y[N,3]
	if err != nil {
		panic(err)
	}
	fmt.Println("input", m.Inputs()[0].Name, m.Inputs()[0].Dims, m.Inputs()[0].Symbols[0])
	for _, n := range []int64{2, 5} {
		x := ge.HostTensor{Desc: ge.TensorDesc{DataType: acl.Float32, Dims: []int64{n, 4}}, Data: make([]byte, n*4*4)}
		out, err := m.Run(context.Background(), []ge.HostTensor{x})
		if err != nil {
			panic(err)
		}
		fmt.Println("batch", n, "→ output dims", out[0].Desc.Dims)
	}
	fmt.Println("plans compiled:", m.Stats().Compiles)
	// Output:
	// input x [-1 4] N
	// batch 2 → output dims [2 3]
	// batch 5 → output dims [5 3]
	// plans compiled: 2
}
