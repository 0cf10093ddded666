// Command quickstart is the SDK's main job in one program: it builds a
// two-layer MLP with the graph engine (ge), compiles it, asks the runtime
// how much work and weight memory the model needs, allocates that memory
// itself, loads the model into it (aclmdlLoadFromMemWithMem), binds
// zero-copy inputs and outputs (zerocopy.Binding), runs the model many
// times on a stream (one aclmdlExecuteAsync per run), checks the output
// against a float64 reference computed in Go, and prints latency
// percentiles and copy counters for zero-copy mode and, beside it, copy
// mode (the same model with its IO in pinned host memory, so the runtime
// copies the input in and the output out at every run).
//
//	go run ./examples/quickstart                  # on the host-memory NPU
//	go run ./examples/quickstart -backend native  # on libascendcl
//
// The program exits with status 1 when a result is wrong or a step fails.
// Copy counters come from the fallback; the native library has none, so
// they print as n/a there. The model is serialized in the ge format, which
// the fallback executes; a native runtime that only takes offline (.om)
// models refuses it at load, and the program says so.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.backend, "backend", "fallback", "backend: fallback, native or auto")
	flag.IntVar(&cfg.iters, "iters", 300, "timed runs per mode")
	flag.IntVar(&cfg.batch, "batch", 64, "batch size (rows of the input)")
	flag.IntVar(&cfg.in, "in", 1024, "input features")
	flag.IntVar(&cfg.hidden, "hidden", 16, "hidden units")
	flag.IntVar(&cfg.out, "out", 1024, "output features")
	flag.Uint64Var(&cfg.seed, "seed", 0, "random seed (0: from the clock)")
	flag.StringVar(&cfg.deviceProfile, "deviceprofile", "", "write the fallback's device-time profile to this file (go tool pprof -top FILE)")
	flag.Parse()
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}
