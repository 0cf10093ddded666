package cann_test

import (
	"fmt"
	"log"

	"github.com/ascend-go/cann"
	"github.com/ascend-go/cann/acl"
)

// Pick a backend and run the AscendCL runtime on it. Programs that must
// run anywhere use cann.OpenFromEnv (CANN_BACKEND, auto by default); this
// example asks for the host-memory fallback so its output is fixed.
func ExampleOpen() {
	p, err := cann.Open(cann.Fallback, cann.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	fmt.Println(p.Mode, "-", p.Reason)

	rt, err := acl.Init(p.Backend, "")
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	dev, err := rt.OpenDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("device", dev.ID())
	// Output:
	// fallback - fallback: requested
	// device 0
}
