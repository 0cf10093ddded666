// Command readme is the program of the README's "Using it" section, kept
// here so that it compiles and runs as a test (main_test.go checks that
// the README shows this file).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/zerocopy"
)

func main() {
	backend := flag.String("backend", os.Getenv(cann.EnvBackend), "auto, native or fallback (when not given: $CANN_BACKEND, else fallback)")
	flag.Parse()
	if flag.NArg() > 0 {
		usage(fmt.Errorf("unexpected argument %q", flag.Arg(0)))
	}
	mode, err := cann.ParseMode(cmp.Or(*backend, "fallback")) // the model below is ge-format, which the fallback runs
	if err != nil {
		usage(err)
	}
	y, err := run(mode)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(y) // [5 8 0 4]
}

func usage(err error) {
	fmt.Fprintln(os.Stderr, "readme:", err)
	os.Exit(2)
}

// run computes y = relu(x·w) for a 2×3 x and a 3×2 w on the NPU.
func run(mode cann.Mode) ([]float32, error) {
	// p.Backend is an acl.Backend: the fallback or libascendcl (fallback.New()
	// and native.Open() return one directly).
	p, err := cann.Open(mode, cann.Options{NoHCCL: true})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	rt, err := acl.Init(p.Backend, "")
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0) // safe from any goroutine: binds the context per call
	if err != nil {
		return nil, err
	}
	defer dev.Close()

	g := ge.NewGraph("mlp")
	x := g.Data("x", 0, acl.Float32, []int64{2, 3})
	w := g.ConstFloat32("w", acl.Float32, []int64{3, 2}, []float32{1, -1, 2, 0, 0, 3})
	g.Output(g.Relu(g.MatMul(x, w)))
	m, err := ge.Compile(g)
	if err != nil {
		return nil, err
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		return nil, err
	}

	model, err := dev.LoadModel(blob) // or dev.LoadModelFile("mlp.om")
	if err != nil {
		return nil, err
	}
	defer model.Close()
	b, err := zerocopy.Bind(model) // IO buffers sized from the desc, datasets built once
	if err != nil {
		return nil, err
	}
	defer b.Close()
	s, err := dev.NewStream()
	if err != nil {
		return nil, err
	}
	defer s.Close()

	if err := b.WriteInput(0, []float32{1, 2, 3, -1, 0, 1}); err != nil {
		return nil, err
	}
	if err := b.RunAsync(s); err != nil { // one aclmdlExecuteAsync: no copies, no allocations
		return nil, err
	}
	if err := b.Wait(context.Background()); err != nil {
		return nil, err
	}
	return b.ReadOutput(0)
}
