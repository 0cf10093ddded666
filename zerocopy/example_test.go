package zerocopy_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/zerocopy"
)

// Load a model y = x + x, bind device buffers to its input and output and
// run it: the tasks read and write the bound buffers directly, with no copy
// in or out.
func ExampleBind() {
	g := ge.NewGraph("double")
	x := g.Data("x", 0, acl.Float32, []int64{4})
	g.Output(g.Add(x, x, ge.Name("y")))
	cm, err := ge.Compile(g)
	if err != nil {
		log.Fatal(err)
	}
	blob, err := cm.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}

	npu, err := fallback.New()
	if err != nil {
		log.Fatal(err)
	}
	rt, err := acl.Init(npu, "")
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	m, err := dev.LoadModel(blob)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()

	b, err := zerocopy.Bind(m) // allocates one device buffer per IO
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	in := make([]byte, 16)
	for i, v := range []float32{1, 2, 3, 4} {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(v))
	}
	if err := b.Input(0).(*acl.DeviceBuffer).CopyFromHost(in); err != nil {
		log.Fatal(err)
	}
	if err := b.Run(); err != nil {
		log.Fatal(err)
	}
	out := make([]byte, 16)
	if err := b.Output(0).(*acl.DeviceBuffer).CopyToHost(out); err != nil {
		log.Fatal(err)
	}
	y := make([]float32, 4)
	for i := range y {
		y[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
	}
	fmt.Println(y)
	// Output:
	// [2 4 6 8]
}

// A model with unknown dims (an ONNX model with a symbolic batch N, on
// the fallback): each run's input shapes go with the data, and the outputs
// come back at their real shapes.
func ExampleBinding_WriteInputDims() {
	npu, err := fallback.New()
	if err != nil {
		log.Fatal(err)
	}
	rt, err := acl.Init(npu, "")
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	// x[N,4], y[N,4], k: sum = Relu(x + y), proj = x·w, seq = Range(0, k, 1)
	m, err := dev.LoadModelFile("../fallback/testdata/dyn_symbolic.onnx")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("x:", m.Desc().Inputs[0].Dims)
	b, err := zerocopy.Bind(m, zerocopy.WithMaxBytes(1024)) // room for the unbounded IO
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	for _, rows := range []int64{1, 2} {
		x := make([]float32, 4*rows)
		for i := range x {
			x[i] = float32(i) - 2
		}
		if err := b.WriteInputDims(0, []int64{rows, 4}, x); err != nil {
			log.Fatal(err)
		}
		if err := b.WriteInputDims(1, []int64{rows, 4}, x); err != nil {
			log.Fatal(err)
		}
		if err := zerocopy.WriteInput(b, 2, []int64{rows + 1}); err != nil {
			log.Fatal(err)
		}
		if err := b.Run(); err != nil {
			log.Fatal(err)
		}
		sum, dims, err := b.ReadOutputDims(0)
		if err != nil {
			log.Fatal(err)
		}
		seq, sdims, err := zerocopy.ReadOutputDims[int64](b, 2)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(dims, sum, sdims, seq)
	}
	// Output:
	// x: [-1 4]
	// [1 4] [0 0 0 2] [2] [0 1]
	// [2 4] [0 0 0 2 4 6 8 10] [3] [0 1 2]
}
