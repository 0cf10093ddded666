package ge_test

import (
	"fmt"
	"log"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Build a graph y = relu(x·w), compile it and round-trip the model
// through its binary format, the form a runtime loads.
func ExampleCompile() {
	g := ge.NewGraph("tiny")
	x := g.Data("x", 0, acl.Float32, []int64{2, 3})
	w := g.ConstFloat32("w", acl.Float32, []int64{3, 4}, make([]float32, 12))
	g.Output(g.Relu(g.MatMul(x, w, ge.Name("fc")), ge.Name("act")))

	m, err := ge.Compile(g)
	if err != nil {
		log.Fatal(err)
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	parsed, err := ge.ParseModel(blob)
	if err != nil {
		log.Fatal(err)
	}
	for _, io := range parsed.Inputs {
		fmt.Printf("input %s %v %d bytes\n", io.Name, io.Dims, io.Size)
	}
	for _, io := range parsed.Outputs {
		fmt.Printf("output %v %d bytes\n", io.Dims, io.Size)
	}
	// The Relu runs in the MatMul's epilogue: one FusedMatMul task.
	fmt.Println("tasks:", len(parsed.Tasks), parsed.Tasks[0].Op)
	// Output:
	// input x [2 3] 24 bytes
	// output [2 4] 32 bytes
	// tasks: 1 FusedMatMul
}
