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
